package service

import (
	"regexp"
	"strings"
)

// volatileNumbers matches the parts of a title that tick: clocks (12:30),
// progress (45%), versions and sizes (3.5, -1.2.3). They are scrubbed from
// bucket keys so a video player's changing timestamp stays one bucket.
//
// It is the legacy `-?\d+([:.]\d+)+%?` plus a bare percentage: the legacy
// pattern needs a separator, so it left "45%" behind, which is exactly the
// ticking progress figure scrubbing is for.
var volatileNumbers = regexp.MustCompile(`-?\d+(([:.]\d+)+%?|%)`)

// ScrubTitle is a title as a bucket key: volatile numbers removed and the
// whitespace they leave behind collapsed. The raw log keeps the full title.
func ScrubTitle(title string) string {
	// Each match becomes a space, not nothing: removing it outright could
	// join its neighbours into a new number ("1:-5%3" → "1:3"), and
	// scrubbing a scrubbed title must change nothing.
	return strings.Join(strings.Fields(volatileNumbers.ReplaceAllString(title, " ")), " ")
}
