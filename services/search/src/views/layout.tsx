/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** The page frame: language, viewport for phones, skip link, navigation, one main landmark. */
import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import { ScopeBadge } from './scope.js';
import { ViewerHeader } from './viewer-header.js';

export interface LayoutProps {
  title: string;
  current: 'overview' | 'search' | 'saved' | 'receipt' | 'none';
  /** Same-origin scripts the page loads (deferred, so they run in this order). */
  scripts?: string[];
  /** Same-origin style sheets besides the site's own. */
  styles?: string[];
  /** More of the head (a page's `<noscript>` refresh). */
  head?: Child;
  children?: Child;
}

export function Layout(props: LayoutProps) {
  // The doctype keeps browsers in standards mode (without it they lay the page out in quirks mode).
  return (
    <>
      {raw('<!DOCTYPE html>')}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${props.title} · Event observatory`}</title>
          <link rel="stylesheet" href="/assets/site.css" />
          {(props.styles ?? []).map((href) => (
            <link rel="stylesheet" href={href} />
          ))}
          {(props.scripts ?? []).map((src) => (
            <script src={src} defer />
          ))}
          {props.head}
        </head>
        <body>
          <a class="skip" href="#main">
            Skip to content
          </a>
          <header>
            <span class="brand">Event observatory</span>
            <nav aria-label="Main">
              <a href="/" aria-current={props.current === 'overview' ? 'page' : undefined}>
                Overview
              </a>{' '}
              ·{' '}
              <a href="/events" aria-current={props.current === 'search' ? 'page' : undefined}>
                Search
              </a>{' '}
              ·{' '}
              <a href="/saved" aria-current={props.current === 'saved' ? 'page' : undefined}>
                Saved searches
              </a>{' '}
              ·{' '}
              <a href="/receipt" aria-current={props.current === 'receipt' ? 'page' : undefined}>
                Receipt
              </a>
            </nav>
            <ViewerHeader />
            <ScopeBadge />
          </header>
          <main id="main">{props.children}</main>
        </body>
      </html>
    </>
  );
}

export const number = new Intl.NumberFormat('en-US');

/** `2026-11-24 08:00:00 UTC`-style text for a time. */
export function utc(d: Date, withMs = true): string {
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, withMs ? 23 : 19)}`;
}

/** The sentences of a 400 answer, announced (`role="alert"`); nothing when there are none. */
export function Problems(props: { problems: string[]; intro?: string }) {
  if (props.problems.length === 0) return null;
  return (
    <div class="problems" role="alert">
      {props.intro ? <p>{props.intro}</p> : null}
      <ul>
        {props.problems.map((p) => (
          <li>{p}</li>
        ))}
      </ul>
    </div>
  );
}

/** The values of these parameters as hidden fields, so a form that does not show them keeps them. */
export function HiddenFields(props: { params: URLSearchParams; names: readonly string[] }) {
  return (
    <>
      {props.names.flatMap((name) =>
        props.params.getAll(name).map((value) => <input type="hidden" name={name} value={value} />),
      )}
    </>
  );
}

/** A button copying `value`, named "Copy <what>"; hidden until `/assets/detail.js` shows it (it needs the clipboard API). */
export function CopyButton(props: { value: string; what: string }) {
  return (
    <button type="button" class="copy" data-copy={props.value} aria-label={`Copy ${props.what}`} hidden>
      Copy
    </button>
  );
}
