import { remoteActions, type ActionContext } from './remote-actions';

const base: ActionContext = { trigger: 'attention', channel: 'slack', role: 'member', openAttention: true, runState: 'waiting' };

describe('the controls a message offers', () => {
  it('offers approve and reject on an open attention to a member', () => {
    expect(remoteActions(base)).toEqual(['approve', 'reject', 'open']);
    expect(remoteActions({ ...base, trigger: 'reminder' })).toEqual(['approve', 'reject', 'open']);
  });

  it('offers a viewer only to open, and nothing to answer once the attention closed', () => {
    expect(remoteActions({ ...base, role: 'viewer' })).toEqual(['open']);
    expect(remoteActions({ ...base, openAttention: false })).toEqual(['open']);
    expect(remoteActions({ ...base, trigger: 'succeeded' })).toEqual(['open']);
  });

  it('gives PacketPhone run controls by state, and revoke only to an admin', () => {
    expect(remoteActions({ ...base, channel: 'packetphone' })).toEqual(['approve', 'reject', 'pause', 'stop', 'open']);
    expect(remoteActions({ ...base, channel: 'packetphone', runState: 'paused', role: 'admin', openAttention: false, trigger: 'progress' })).toEqual(['resume', 'stop', 'revoke', 'open']);
    expect(remoteActions({ ...base, channel: 'packetphone', runState: null, openAttention: false, trigger: 'failed' })).toEqual(['open']);
  });

  it('keeps PacketChat links read-only', () => {
    expect(remoteActions({ ...base, channel: 'packetchat', role: 'admin' })).toEqual(['open']);
  });
});
