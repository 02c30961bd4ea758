/** The page's only stylesheet, served as /style.css (the Content-Security-Policy allows styles from 'self' only). */
export const STYLE = `:root {
  color-scheme: light dark;
  --bg: #f4f5f7; --card: #fff; --text: #1d2330; --muted: #667085; --line: #dde1e7;
  --accent: #2f6fde; --ok: #1f8a4c; --bad: #c4352b; --warn: #a66a00;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #14171c; --card: #1d2128; --text: #e6e8ec; --muted: #98a2b3; --line: #323844; --accent: #6d9cf0; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); }
h1 { font-size: 1.35rem; margin: 0; }
h2 { font-size: 1.05rem; margin: 0 0 .75rem; }
h2:not(:first-child) { margin-top: 1.5rem; }
code { font: .85em ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.muted { color: var(--muted); font-weight: normal; }
.top { display: flex; justify-content: space-between; align-items: baseline; padding: 1rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--card); }
.who { margin: 0; color: var(--muted); }
.grid { display: grid; grid-template-columns: minmax(0, 5fr) minmax(0, 6fr); gap: 1.25rem; padding: 1.25rem 1.5rem; max-width: 1240px; margin: 0 auto; }
@media (max-width: 900px) { .grid { grid-template-columns: 1fr; } }
.narrow { max-width: 36rem; margin: 3rem auto; padding: 0 1.5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1.1rem 1.25rem; }
.stack { display: grid; gap: .45rem; }
.field { font-weight: 600; }
input[type=text] { width: 100%; padding: .5rem .6rem; font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; }
input[type=text]:focus, button:focus-visible, input[type=checkbox]:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: .5rem 0 0; padding: .4rem .8rem .6rem; }
legend { font-weight: 600; padding: 0 .3rem; }
.check { display: flex; gap: .55rem; align-items: baseline; padding: .2rem 0; }
.check.small { font-size: .9rem; }
.hint { margin: 0; font-size: .85rem; color: var(--muted); }
.actions { margin-top: .4rem; }
button { font: inherit; font-weight: 600; padding: .45rem 1.1rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: transparent; color: var(--accent); }
.test { display: flex; gap: .75rem; align-items: center; margin-top: 1rem; padding-top: 1rem; border-top: 1px solid var(--line); flex-wrap: wrap; }
.flash { margin: 0 0 .75rem; padding: .55rem .75rem; border-radius: 6px; border: 1px solid; }
.flash.ok { color: var(--ok); border-color: var(--ok); background: color-mix(in srgb, var(--ok) 8%, transparent); }
.flash.error { color: var(--bad); border-color: var(--bad); background: color-mix(in srgb, var(--bad) 8%, transparent); }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .45rem 1rem; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.state { display: inline-block; font-weight: 600; padding: 0 .45rem; border-radius: 999px; font-size: .85rem; border: 1px solid; }
.state.running { color: var(--ok); }
.state.offline { color: var(--bad); }
.state.starting, .state.stopping { color: var(--warn); }
.bad { color: var(--bad); }
.why { display: block; font-size: .85rem; color: var(--muted); overflow-wrap: anywhere; }
table { width: 100%; border-collapse: collapse; font-size: .9rem; }
th, td { text-align: left; padding: .35rem .4rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); }
.tag { font-size: .8rem; padding: 0 .4rem; border-radius: 4px; background: var(--bg); border: 1px solid var(--line); }
footer { padding: 0 1.5rem 1.5rem; font-size: .85rem; max-width: 1240px; margin: 0 auto; }
`;
