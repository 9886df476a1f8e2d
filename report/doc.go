// Package report turns the record in a state directory — the audit chain,
// pending summaries and retained raw logs — into the picture of a period
// that `antidrift report` prints as text, JSON or an HTML page, and that
// the daemon's Report method returns to panels.
//
// It reads the directory through persist.Reader (no lock, no write), so it
// works while the daemon runs and never changes what it reports on. With
// Options.Apps it names each window class by its desktop entry (package
// apps), and the HTML page embeds the apps' icons.
package report
