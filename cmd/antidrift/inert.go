package main

import (
	"slices"

	"github.com/antidrift/antidrift/internal/inert"
)

// forTerminal is s with every text from outside in it (the daemon's, the
// window's, the person's: titles, classes, the next action, reasons,
// problems) made inert for a terminal by inert.Terminal. The text views
// (status, status --follow, confirmations, and the panels, which build on
// them) render this copy; --json renders s.raw, which stays exact.
func (s *status) forTerminal() *status {
	if s == nil {
		return nil
	}
	c := *s
	for _, p := range []*string{&c.State, &c.NextAction, &c.SuccessCondition, &c.Outcome, &c.Enforcement,
		&c.Drift, &c.DriftReason, &c.CurrentClass, &c.CurrentTitle, &c.EvidenceReason, &c.CurrentSite, &c.SiteReason,
		&c.CurrentAppId, &c.CurrentAppName, &c.CurrentAppIcon, &c.TaskRef, &c.TaskTitle, &c.TaskResult} {
		*p = inert.Terminal(*p)
	}
	c.AllowedClasses = terminalAll(s.AllowedClasses)
	c.Problems = terminalAll(s.Problems)
	c.Buckets = slices.Clone(s.Buckets)
	for i := range c.Buckets {
		c.Buckets[i].Class, c.Buckets[i].Title = inert.Terminal(c.Buckets[i].Class), inert.Terminal(c.Buckets[i].Title)
	}
	c.BucketApps = slices.Clone(s.BucketApps)
	for i, a := range c.BucketApps {
		c.BucketApps[i] = bucketApp{inert.Terminal(a.Class), inert.Terminal(a.ID), inert.Terminal(a.Name), inert.Terminal(a.Icon)}
	}
	return &c
}

func terminalAll(texts []string) []string {
	if texts == nil {
		return nil
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = inert.Terminal(t)
	}
	return out
}
