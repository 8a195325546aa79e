/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** A page that explains a failure in words: bad filters, a timed-out query, an unknown event. */
import { Layout } from './layout.js';

export function ErrorPage(props: { title: string; message: string }) {
  return (
    <Layout title={props.title} current="none">
      <h1>{props.title}</h1>
      <p class="problems" role="alert">
        {props.message}
      </p>
      <p>
        <a href="/events">Start a new search</a> or go to the <a href="/">overview</a>.
      </p>
    </Layout>
  );
}
