package report

import (
	"cmp"
	"slices"

	"github.com/antidrift/antidrift/service"
)

// topSites is how many hosts a report names.
const topSites = 10

// SiteTime is one host's time in front of a browser window over the
// period: on task and drift, as the sessions' sealed summaries record them
// (hosts only: a summary never keeps a path).
type SiteTime struct {
	Host          string `json:"host"`
	OnTaskSeconds uint64 `json:"on_task_seconds"`
	DriftSeconds  uint64 `json:"drift_seconds"`
}

// siteTally adds up the period's time per host.
type siteTally map[string]*SiteTime

func (s siteTally) add(sum service.Summary) {
	for _, st := range sum.Sites {
		t := s[st.Host]
		if t == nil {
			t = &SiteTime{Host: st.Host}
			s[st.Host] = t
		}
		drift := min(st.DriftSeconds, st.Seconds)
		t.DriftSeconds += drift
		t.OnTaskSeconds += st.Seconds - drift
	}
}

// top is the n hosts with the most time, ties in name order; the (other)
// entry of the summaries is not a host and stays out.
func (s siteTally) top(n int) []SiteTime {
	out := make([]SiteTime, 0, len(s))
	for host, t := range s {
		if host != service.OtherSites {
			out = append(out, *t)
		}
	}
	total := func(t SiteTime) uint64 { return t.OnTaskSeconds + t.DriftSeconds }
	slices.SortFunc(out, func(a, b SiteTime) int {
		return cmp.Or(cmp.Compare(total(b), total(a)), cmp.Compare(a.Host, b.Host))
	})
	return out[:min(len(out), n)]
}
