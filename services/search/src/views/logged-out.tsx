/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** After the logout: on to the identity provider, which ends its own session. */
import { Layout } from './layout.js';

export function LoggedOutPage(props: { provider: string }) {
  return (
    <Layout title="Logged out" current="none">
      <h1>Logged out</h1>
      <p>
        You are logged out of the search. <a href={props.provider}>Continue to the identity provider</a> to
        end your session there too.
      </p>
    </Layout>
  );
}
