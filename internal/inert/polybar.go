package inert

import "strings"

// Polybar is s as a polybar module may print it: Terminal's escapes (a
// newline would end the module's line, and polybar draws no control
// characters), and no "%{" left. "%{" opens a polybar formatting tag —
// %{A1:command:} runs a command on a click, %{F#f00} recolours — and
// polybar has no way to escape it (it reads "%%{" as "%" and a tag), so it
// is written "% {": the text stays readable and polybar reads no tag.
func Polybar(s string) string {
	return strings.ReplaceAll(Terminal(s), "%{", "% {")
}
