// Package inert makes text from outside (window titles and classes, next
// actions, success conditions, a model's reasons, rules, config values)
// inert for the reader it is shown to: one function per kind of reader,
// each neutralizing what that reader would interpret, and nothing more.
//
// The text itself is data and stays exact everywhere it is stored or
// passed on (the raw log, the audit chain, --json, the bus): these
// functions are for the moment it is rendered, never for a sensor or the
// core. A rule still matches the real title.
//
// Terminal and Polybar are idempotent: making their output inert again
// changes nothing, so a line built of parts already made inert may be made
// inert as a whole. Markup is not (it would write &amp;amp;): it is the
// last step, once, on the whole text the markup reader gets.
package inert
