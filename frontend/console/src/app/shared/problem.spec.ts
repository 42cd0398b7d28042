import { describeProblem, issuesByPath, toProblem } from './problem';

describe(toProblem.name, () => {
  it('reads a problem+json body with its validation issues', () => {
    const sut = toProblem(400, { title: 'Invalid definition', detail: 'two issues', code: 'invalid_definition', errors: [{ path: 'tools.0.tool', message: 'unknown tool' }, { path: 'name', message: 'required' }] });
    expect(sut).toEqual({ status: 400, title: 'Invalid definition', detail: 'two issues', code: 'invalid_definition', errors: [{ path: 'tools.0.tool', message: 'unknown tool' }, { path: 'name', message: 'required' }] });
  });

  it('falls back to the status when the body is not a problem', () => {
    expect(toProblem(502, '<html>bad gateway</html>', 'Bad Gateway')).toMatchObject({ title: 'Bad Gateway', detail: '', code: null, errors: [] });
    expect(toProblem(0, null).title).toBe('The server could not be reached');
  });
});

describe(issuesByPath.name, () => {
  it('groups messages by path', () => {
    expect([...issuesByPath([{ path: 'a', message: '1' }, { path: 'a', message: '2' }, { path: '', message: '3' }])]).toEqual([['a', ['1', '2']], ['', ['3']]]);
  });
});

describe(describeProblem.name, () => {
  it('names the route when a read route answers a generic 404', () => {
    expect(describeProblem(toProblem(404, { title: 'Not Found', detail: 'no route', code: 'not_found' }), 'GET /x')).toBe('This server does not answer GET /x (404). no route');
  });

  it('keeps a specific not-found answer as the server worded it', () => {
    expect(describeProblem(toProblem(404, { title: 'Not Found', detail: 'no such run', code: 'run_not_found' }), 'GET /x')).toBe('Not Found. no such run');
  });
});
