package dbusapi

import (
	"reflect"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// bucket is the D-Bus shape of a bucket: (sst).
type bucket struct {
	Class   string
	Title   string
	Seconds uint64
}

// property maps one D-Bus property to its field of service.View. The list
// is the one place a property is named; the test checks it against the
// interface XML.
var propertyList = []struct {
	name string
	get  func(v *service.View) any
}{
	{"State", func(v *service.View) any { return string(v.State) }},
	{"SessionId", func(v *service.View) any { return v.SessionID }},
	{"NextAction", func(v *service.View) any { return v.NextAction }},
	{"SuccessCondition", func(v *service.View) any { return v.SuccessCondition }},
	{"TimeboxSeconds", func(v *service.View) any { return v.TimeboxSeconds }},
	{"StartedAt", func(v *service.View) any { return v.StartedAt }},
	{"Deadline", func(v *service.View) any { return v.Deadline }},
	{"Outcome", func(v *service.View) any { return string(v.Outcome) }},
	{"Enforcement", func(v *service.View) any { return string(v.Enforcement) }},
	{"AllowedClasses", func(v *service.View) any { return v.AllowedClasses }},
	{"Drift", func(v *service.View) any { return v.Drift }},
	{"DriftReason", func(v *service.View) any { return v.DriftReason }},
	{"BreakDue", func(v *service.View) any { return v.BreakDue }},
	{"Enforced", func(v *service.View) any { return v.Enforced }},
	{"MinimizeCount", func(v *service.View) any { return v.MinimizeCount }},
	{"CurrentClass", func(v *service.View) any { return v.CurrentClass }},
	{"CurrentTitle", func(v *service.View) any { return v.CurrentTitle }},
	{"CurrentAppId", func(v *service.View) any { return v.CurrentApp.ID }},
	{"CurrentAppName", func(v *service.View) any { return v.CurrentApp.Name }},
	{"CurrentAppIcon", func(v *service.View) any { return v.CurrentApp.Icon }},
	{"CurrentSite", func(v *service.View) any { return v.CurrentSite }},
	{"SiteReason", func(v *service.View) any { return v.SiteReason }},
	{"EvidenceAvailable", func(v *service.View) any { return v.EvidenceAvailable }},
	{"EvidenceReason", func(v *service.View) any { return v.EvidenceReason }},
	{"EvidenceSource", func(v *service.View) any { return v.EvidenceSource }},
	{"SwitchCount", func(v *service.View) any { return v.SwitchCount }},
	{"Buckets", func(v *service.View) any { return buckets(v.Buckets) }},
	{"BucketApps", func(v *service.View) any { return bucketApps(v.BucketApps) }},
	{"BreakGlassAt", func(v *service.View) any { return v.BreakGlassAt }},
	{"AuditHead", func(v *service.View) any { return v.AuditHead }},
	{"AuditPending", func(v *service.View) any { return v.AuditPending }},
	{"Problems", func(v *service.View) any { return nonNil(v.Problems) }},
	{"Permitted", func(v *service.View) any { return nonNil(v.Permitted) }},
	{"Version", func(v *service.View) any { return v.Version }},
	{"Quiet", func(v *service.View) any { return v.Quiet }},
	{"QuietNote", func(v *service.View) any { return v.QuietNote }},
	{"TaskRef", func(v *service.View) any { return v.TaskRef }},
	{"TaskTitle", func(v *service.View) any { return v.TaskTitle }},
	{"TaskResult", func(v *service.View) any { return v.TaskResult }},
	{"Proposal", func(v *service.View) any { return proposal(v.Proposal) }},
}

// proposalStruct is the D-Bus shape of a proposal: (sstass).
type proposalStruct struct {
	NextAction       string
	SuccessCondition string
	TimeboxSecs      uint64
	Allowed          []string
	Why              string
}

func proposal(p service.Proposal) proposalStruct {
	return proposalStruct{p.NextAction, p.SuccessCondition, p.TimeboxSecs, nonNil(p.Allowed), p.Why}
}

func buckets(in []service.Bucket) []bucket {
	out := make([]bucket, len(in))
	for i, b := range in {
		out[i] = bucket(b)
	}
	return out
}

// bucketApp is the D-Bus shape of a class's desktop entry: (ssss) class,
// desktop id, name, icon.
type bucketApp struct {
	Class, ID, Name, Icon string
}

func bucketApps(in []service.BucketApp) []bucketApp {
	out := make([]bucketApp, len(in))
	for i, b := range in {
		out[i] = bucketApp{b.Class, b.App.ID, b.App.Name, b.App.Icon}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// properties renders a view as the property map GetAll returns.
func properties(v service.View) map[string]dbus.Variant {
	m := make(map[string]dbus.Variant, len(propertyList))
	for _, p := range propertyList {
		m[p.name] = dbus.MakeVariant(p.get(&v))
	}
	return m
}

// changed returns the properties of now that differ from before.
func changed(before, now map[string]dbus.Variant) map[string]dbus.Variant {
	out := make(map[string]dbus.Variant)
	for k, v := range now {
		if old, ok := before[k]; !ok || !reflect.DeepEqual(old.Value(), v.Value()) {
			out[k] = v
		}
	}
	return out
}
