package inert

import "strings"

// Markup is s as text inside markup that reads the XML entities: Pango
// markup (waybar's text and tooltip) and the body of a desktop
// notification when the server advertises "body-markup" (the Desktop
// Notifications specification names the same entities). &, < and > are
// written as entities, so no tag (<img src=…> fetching a URL, <a href>
// drawing a link, <b>) and no entity of the text is read as markup.
func Markup(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return markupEscaper.Replace(s)
}

var markupEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
