/**
 * Test-only authenticator: the viewer comes from the request header `x-test-viewer`
 * (`<subject>;<group>,<group>`); without it, 401. Lets a test be two people at once.
 */
import type { Authenticator } from '../src/viewer.js';

export const TEST_VIEWER_HEADER = 'x-test-viewer';

export const headerViewer: Authenticator = async (c, next) => {
  const value = c.req.header(TEST_VIEWER_HEADER);
  if (!value) return c.text('no test viewer', 401);
  const [subject = '', groups = ''] = value.split(';');
  c.set('viewer', {
    subject,
    display: subject,
    groups: groups.split(',').filter(Boolean),
    via: 'proxy',
  });
  await next();
};

/** The header making `subject` of `groups` the viewer. */
export function asViewer(subject: string, groups: string[] = []): Record<string, string> {
  return { [TEST_VIEWER_HEADER]: `${subject};${groups.join(',')}` };
}
