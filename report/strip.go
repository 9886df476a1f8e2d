package report

// A strip is a session's timeline squeezed into a fixed number of cells,
// each showing the kind that held most of its time: the text report draws
// it in characters, the HTML one in SVG, from the same cells.

// Kinds in the order legends list them.
var kinds = []string{"on_task", "drift", "away", "unavailable"}

// strip divides the session's timeline into n equal cells and returns the
// dominant kind of each ("" for a cell no stretch covers).
func strip(tl []Stretch, n int) []string {
	cells := make([]string, n)
	if len(tl) == 0 || n <= 0 {
		return cells
	}
	t0, t1 := tl[0].FromUnixMillis, tl[len(tl)-1].ToUnixMillis
	if t1 <= t0 {
		return cells
	}
	span := float64(t1 - t0)
	weight := make([]map[string]float64, n)
	for _, s := range tl {
		a := float64(s.FromUnixMillis-t0) / span * float64(n)
		b := float64(s.ToUnixMillis-t0) / span * float64(n)
		for i := max(int(a), 0); i < n && float64(i) < b; i++ {
			lo, hi := max(a, float64(i)), min(b, float64(i+1))
			if hi <= lo {
				continue
			}
			if weight[i] == nil {
				weight[i] = map[string]float64{}
			}
			weight[i][s.Kind] += hi - lo
		}
	}
	for i, w := range weight {
		best := 0.0
		for _, k := range kinds {
			if w[k] > best {
				best, cells[i] = w[k], k
			}
		}
	}
	return cells
}

// kindName is a kind as a legend says it.
func kindName(kind string) string {
	switch kind {
	case "on_task":
		return "on task"
	case "unavailable":
		return "no evidence"
	}
	return kind
}
