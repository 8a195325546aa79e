/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** The `local` mode's login form: user name, password and the form's token. */
import { Layout } from './layout.js';

export function LoginPage(props: { csrf: string; problem?: string }) {
  return (
    <Layout title="Log in" current="none">
      <h1>Log in</h1>
      {props.problem ? (
        <p class="problems" role="alert">
          {props.problem}
        </p>
      ) : null}
      <form method="post" action="/login" class="filters" aria-label="Log in">
        <input type="hidden" name="csrf" value={props.csrf} />
        <div>
          <label for="login-username">User name</label>
          <input id="login-username" name="username" type="text" autocomplete="username" required />
        </div>
        <div>
          <label for="login-password">Password</label>
          <input
            id="login-password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
          />
        </div>
        <div class="wide">
          <button type="submit">Log in</button>
        </div>
      </form>
    </Layout>
  );
}
