package report

import (
	"encoding/json"
	"io"
)

// JSON writes the report as the documented schema, indented for people
// and stable for scripts (keys in a fixed order, lists never null except
// a session's pruned timeline).
func JSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
