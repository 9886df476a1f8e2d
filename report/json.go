package report

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/antidrift/antidrift/internal/inert"
)

// JSON writes the report as the documented schema, indented for people
// and stable for scripts (keys in a fixed order, lists never null except
// a session's pruned timeline).
// What a terminal would act on in its text is \u-escaped (inert.JSON): a
// script decodes the same text.
func JSON(w io.Writer, r *Report) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(inert.JSON(b.Bytes()))
	return err
}
