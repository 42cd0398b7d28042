import { approversText, argumentsEditable, budgetRequestOf, MAX_EDITED_ARGUMENTS_BYTES, parseEditedArguments, quorumText } from './attention-facts';

describe(budgetRequestOf.name, () => {
  it("reads a budget request's amount and reason", () => {
    expect(budgetRequestOf({ kind: 'budget_request', evidence: { request: 1, requestedUsd: 0.5, spentUsd: 0.4, limitUsd: 0.5, reason: 'the next call needs $0.41' } })).toEqual({
      requestedUsd: 0.5,
      spentUsd: 0.4,
      limitUsd: 0.5,
      reason: 'the next call needs $0.41',
    });
  });

  it("reads nothing from a tool call's arguments or from evidence without amounts", () => {
    expect(budgetRequestOf({ url: 'https://example.com' })).toBeNull();
    expect(budgetRequestOf({ kind: 'budget_request', evidence: { requestedUsd: 'lots' } })).toBeNull();
    expect(budgetRequestOf(null)).toBeNull();
  });
});

describe(quorumText.name, () => {
  it('counts approvals towards a quorum, and says nothing for a single approver', () => {
    expect(quorumText({ mode: 'always', quorum: 2 }, [{}])).toBe('1 of 2 approvals');
    expect(quorumText({ mode: 'always', quorum: 3 }, undefined)).toBe('0 of 3 approvals');
    expect(quorumText({ mode: 'always' }, [])).toBeNull();
    expect(quorumText(null, undefined)).toBeNull();
  });
});

describe(approversText.name, () => {
  it('names who may approve', () => {
    expect(approversText({ mode: 'always', approvers: 'admin' })).toBe('at least the admin role');
    expect(approversText({ mode: 'always', approvers: ['alice@example.com', 'bob@example.com'] })).toBe('alice@example.com, bob@example.com');
    expect(approversText({ mode: 'always' })).toBeNull();
  });
});

describe(argumentsEditable.name, () => {
  const call = { tool: 'http_fetch', arguments: { url: 'https://example.com/a' }, rules: null };

  it("offers to edit a built-in tool's call under a single approver", () => {
    expect(argumentsEditable(call)).toBe(true);
    expect(argumentsEditable({ ...call, rules: { mode: 'always', quorum: 1 } })).toBe(true);
  });

  it('does not offer it for a budget request, an MCP call, a quorum, or arguments that are not an object', () => {
    expect(argumentsEditable({ ...call, tool: 'request_budget', arguments: { kind: 'budget_request', evidence: {} } })).toBe(false);
    expect(argumentsEditable({ ...call, tool: 'mcp' })).toBe(false);
    expect(argumentsEditable({ ...call, rules: { mode: 'always', quorum: 2 } })).toBe(false);
    expect(argumentsEditable({ ...call, arguments: null })).toBe(false);
  });
});

describe(parseEditedArguments.name, () => {
  const original = { url: 'https://example.com/1', method: 'GET' };

  it('takes a changed JSON object', () => {
    expect(parseEditedArguments('{"method": "GET", "url": "https://example.com/2"}', original)).toEqual({ ok: true, value: { method: 'GET', url: 'https://example.com/2' } });
  });

  it('refuses text that is not JSON, or JSON that is not an object', () => {
    expect(parseEditedArguments('{url:', original)).toMatchObject({ ok: false, message: expect.stringMatching(/^Not JSON: /) });
    expect(parseEditedArguments('[1, 2]', original)).toEqual({ ok: false, message: 'The arguments must be a JSON object, as the call was made with.' });
    expect(parseEditedArguments('null', original)).toMatchObject({ ok: false });
    expect(parseEditedArguments('  ', original)).toEqual({ ok: false, message: 'Type the arguments as a JSON object.' });
  });

  it('refuses the recorded arguments unchanged, whatever the order of their keys', () => {
    expect(parseEditedArguments('{\n  "method": "GET",\n  "url": "https://example.com/1"\n}', original)).toEqual({ ok: false, message: 'The arguments are unchanged: approve the call as it is instead.' });
  });

  it('refuses arguments that still hold a redacted value, which the call would be made with', () => {
    const sut = parseEditedArguments('{"url": "https://example.com/2?token=***", "headers": {"x": "y"}}', { url: 'https://example.com/1?token=***' });

    expect(sut).toEqual({ ok: false, message: 'The arguments still hold a redacted value (***): type the real value, or remove it.' });
    expect(parseEditedArguments('{"headers": [{"authorization": "***"}]}')).toMatchObject({ ok: false });
  });

  it('refuses arguments larger than the server takes', () => {
    const sut = parseEditedArguments(JSON.stringify({ body: 'x'.repeat(MAX_EDITED_ARGUMENTS_BYTES) }), original);

    expect(sut).toMatchObject({ ok: false, message: expect.stringMatching(/at most 65536 can be sent/) });
  });
});
