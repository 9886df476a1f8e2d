package service

import (
	"cmp"
	"slices"
	"time"
)

// TopSites is how many hosts a summary seals by name; the time of the rest
// is one (other) entry.
const TopSites = 20

// OtherSites is the host of the entry that holds the time of the hosts not
// named.
const OtherSites = "(other)"

// siteTally is a session's time per host: on the pages in front, and of
// that, drift. It holds at most MaxBucketKeys hosts; time of hosts beyond
// folds into OtherSites, so memory stays flat.
type siteTally map[string]*siteTime

type siteTime struct{ total, drift time.Duration }

func (t siteTally) credit(host string, d time.Duration, drift bool) {
	if host == "" || d <= 0 {
		return
	}
	st := t[host]
	if st == nil {
		if len(t) >= MaxBucketKeys {
			host = OtherSites
			st = t[host]
		}
		if st == nil {
			st = &siteTime{}
			t[host] = st
		}
	}
	st.total += d
	if drift {
		st.drift += d
	}
}

// top is the n hosts with the most time, longest first (ties by name),
// then OtherSites with the rest when there is any.
func (t siteTally) top(n int) []SiteTime {
	out := make([]SiteTime, 0, len(t))
	var rest siteTime
	for host, st := range t {
		if host == OtherSites {
			rest.total, rest.drift = rest.total+st.total, rest.drift+st.drift
			continue
		}
		out = append(out, SiteTime{Host: host, Seconds: seconds(st.total), DriftSeconds: seconds(st.drift)})
	}
	slices.SortFunc(out, func(a, b SiteTime) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Host, b.Host))
	})
	if len(out) > n {
		for _, x := range out[n:] {
			rest.total += time.Duration(x.Seconds) * time.Second
			rest.drift += time.Duration(x.DriftSeconds) * time.Second
		}
		out = out[:n]
	}
	if rest.total > 0 {
		out = append(out, SiteTime{Host: OtherSites, Seconds: seconds(rest.total), DriftSeconds: seconds(rest.drift)})
	}
	return out
}
