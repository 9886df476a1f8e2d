package service

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestLifecycleCompleteEnd(t *testing.T) {
	h := newHarness(t)
	must(t, h.Plan())
	if v := h.View(); v.State != StatePlanning {
		t.Fatalf("State after Plan: got %s, want %s", v.State, StatePlanning)
	}
	id := h.start(t, "", "Editor")
	v := h.View()
	if v.State != StateActive || v.SessionID != id || v.Enforcement != LevelWarn {
		t.Fatalf("after Start: State, SessionID, Enforcement: got %s %q %s, want %s %q %s", v.State, v.SessionID, v.Enforcement, StateActive, id, LevelWarn)
	}
	if v.Deadline-v.StartedAt != 25*60 || v.TimeboxSeconds != 25*60 {
		t.Fatalf("Deadline-StartedAt, TimeboxSeconds: got %d %d, want %d %d", v.Deadline-v.StartedAt, v.TimeboxSeconds, 25*60, 25*60)
	}
	if !reflect.DeepEqual(v.AllowedClasses, []string{"Editor"}) {
		t.Fatalf("AllowedClasses: got %q, want %q", v.AllowedClasses, []string{"Editor"})
	}
	h.clock.Advance(10 * time.Minute)
	must(t, h.Complete())
	if v := h.View(); v.State != StateReview || v.Outcome != OutcomeCompleted {
		t.Fatalf("State, Outcome after Complete: got %s %s, want %s %s", v.State, v.Outcome, StateReview, OutcomeCompleted)
	}
	hash, err := h.End()
	must(t, err)
	sealed := h.store.sealed()
	if len(sealed) != 1 || hash == "" || sealed[0].Hash != hash {
		t.Fatalf("End: got hash %q, chain %+v, want a hash and one sealed summary holding it", hash, sealed)
	}
	s := sealed[0]
	if s.SessionID != id || s.Outcome != OutcomeCompleted || s.EndedUnix-s.StartedUnix != 600 || s.TimeboxSecs != 1500 {
		t.Fatalf("summary: got %+v, want session %q %s, 600 s long, timebox 1500 s", s, id, OutcomeCompleted)
	}
	v = h.View()
	if v.State != StateLocked || v.SessionID != "" || v.Deadline != 0 || v.AuditHead != hash || len(v.Buckets) != 0 {
		t.Fatalf("after End: got %+v, want %s with no session, deadline or buckets and AuditHead %q", v, StateLocked, hash)
	}
	if len(h.rec.ended) != 1 || !strings.Contains(h.rec.ended[0], id+" completed "+hash) {
		t.Fatalf("SessionEnded heard: got %q, want once %q", h.rec.ended, id+" completed "+hash)
	}
	if h.clock.armed() != 0 {
		t.Fatalf("armed timers after End: got %d, want 0 (no deadline timer)", h.clock.armed())
	}
}

func TestCancelPlanAndPlannedLevel(t *testing.T) {
	h := newHarness(t)
	must(t, h.Plan())
	must(t, h.SetEnforcement("locked"))
	must(t, h.SetEnforcement("observe")) // nothing is committed in planning
	must(t, h.SetEnforcement("block"))
	if v := h.View(); v.Enforcement != LevelBlock {
		t.Fatalf("planned level: got %s, want %s", v.Enforcement, LevelBlock)
	}
	h.start(t, "")
	if v := h.View(); v.Enforcement != LevelBlock {
		t.Fatalf("Start with \"\" after planning block: Enforcement: got %s, want %s", v.Enforcement, LevelBlock)
	}
	h2 := newHarness(t)
	must(t, h2.Plan())
	must(t, h2.CancelPlan())
	if v := h2.View(); v.State != StateLocked || h2.store.last().State != StateLocked {
		t.Fatalf("after CancelPlan: State, snapshot State: got %s %s, want %s %s", v.State, h2.store.last().State, StateLocked, StateLocked)
	}
}

func TestExpiryAtDeadline(t *testing.T) {
	h := newHarness(t)
	h.start(t, LevelWarn)
	h.clock.Advance(25*time.Minute - time.Second)
	if h.View().State != StateActive {
		t.Fatalf("State a second before the deadline: got %s, want %s", h.View().State, StateActive)
	}
	h.clock.Advance(time.Second)
	v := h.View()
	if v.State != StateReview || v.Outcome != OutcomeExpired {
		t.Fatalf("State, Outcome at the deadline: got %s %s, want %s %s", v.State, v.Outcome, StateReview, OutcomeExpired)
	}
	if got := h.store.last(); got.State != StateReview || got.Outcome != OutcomeExpired {
		t.Fatalf("snapshot after expiry: got %+v, want %s %s", got, StateReview, OutcomeExpired)
	}
}

func TestExtend(t *testing.T) {
	h := newHarness(t)
	h.start(t, LevelWarn)
	must(t, h.Extend(600))
	if v := h.View(); v.Deadline-v.StartedAt != 35*60 || v.TimeboxSeconds != 35*60 {
		t.Fatalf("extended: Deadline-StartedAt, TimeboxSeconds: got %d %d, want %d %d", v.Deadline-v.StartedAt, v.TimeboxSeconds, 35*60, 35*60)
	}
	h.clock.Advance(25 * time.Minute)
	if h.View().State != StateActive {
		t.Fatalf("State at the old deadline: got %s, want %s", h.View().State, StateActive)
	}
	h.clock.Advance(10 * time.Minute)
	if v := h.View(); v.State != StateReview || v.Outcome != OutcomeExpired {
		t.Fatalf("State, Outcome at the extended deadline: got %s %s, want %s %s", v.State, v.Outcome, StateReview, OutcomeExpired)
	}
	// Review → active, with a fresh deadline from now.
	h.clock.Advance(time.Hour)
	must(t, h.Extend(300))
	v := h.View()
	if v.State != StateActive || v.Outcome != OutcomeNone || v.Deadline != h.clock.Now().Unix()+300 {
		t.Fatalf("revived: State, Outcome, Deadline: got %s %q %d, want %s %q %d", v.State, v.Outcome, v.Deadline, StateActive, OutcomeNone, h.clock.Now().Unix()+300)
	}
	// The hour in review is not accounted.
	h.clock.Advance(4 * time.Minute)
	must(t, h.Complete())
	h.Service.mu.Lock()
	total := h.Service.stats.total
	h.Service.mu.Unlock()
	if total != 39*time.Minute {
		t.Fatalf("accounted %s, want 39m (35 active + 4 after revival)", total)
	}
}

func TestExtendPast24HoursRefused(t *testing.T) {
	h := newHarness(t)
	_, err := h.Start("a", "b", 23*3600, "", nil)
	must(t, err)
	err = h.Extend(3601)
	var e *Error
	if !errors.As(err, &e) || e.Kind != InvalidArgument || !strings.Contains(e.Msg, "24 hours") {
		t.Fatalf("Extend past 24 h: got %v, want InvalidArgument naming 24 hours", err)
	}
	must(t, h.Extend(3600))
}

func TestInvalidArguments(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("x", 501)
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"empty next action", func() error { _, err := h.Start("  ", "b", 60, "", nil); return err }, "next_action"},
		{"long success", func() error { _, err := h.Start("a", long, 60, "", nil); return err }, "success_condition"},
		{"control chars", func() error { _, err := h.Start("a\nb", "b", 60, "", nil); return err }, "control characters"},
		{"zero timebox", func() error { _, err := h.Start("a", "b", 0, "", nil); return err }, "timebox_secs"},
		{"huge timebox", func() error { _, err := h.Start("a", "b", 86401, "", nil); return err }, "timebox_secs"},
		{"bad level", func() error { _, err := h.Start("a", "b", 60, "strict", nil); return err }, "observe, warn, block, locked"},
		{"too many classes", func() error { _, err := h.Start("a", "b", 60, "", make([]string, 65)); return err }, "at most 64"},
		{"empty class", func() error { _, err := h.Start("a", "b", 60, "", []string{""}); return err }, `allowed_classes entry 1 "" is not a valid entry: it is empty`},
		{"bad title glob", func() error { _, err := h.Start("a", "b", 60, "", []string{"Emacs", "firefox:*[GitHub*"}); return err },
			`allowed_classes entry 2 "firefox:*[GitHub*" is not a valid entry: the title pattern has a [ that is never closed`},
		{"empty title glob", func() error { _, err := h.Start("a", "b", 60, "", []string{"firefox:"}); return err }, "the title pattern after ':' is empty"},
		{"empty class glob", func() error { _, err := h.Start("a", "b", 60, "", []string{":*YouTube*"}); return err }, "use * for any class"},
		{"backwards range", func() error { _, err := h.Start("a", "b", 60, "", []string{"x[z-a]"}); return err }, "backwards range"},
		{"lone escape", func() error { _, err := h.Start("a", "b", 60, "", []string{`term:build\`}); return err }, `lone \`},
		{"history limit", func() error { _, err := h.History(1001); return err }, "limit"},
		{"report backwards", func() error { _, err := h.Report(100, 100); return err }, "until_unix must be after since_unix"},
		{"report before 1970", func() error { _, err := h.Report(-1, 100); return err }, "since_unix"},
		{"report too long", func() error { _, err := h.Report(0, 401*24*3600); return err }, "at most 400 days; got 401 days"},
		{"bad level set", func() error { return h.SetEnforcement("") }, "level"},
	} {
		var e *Error
		err := c.call()
		if !errors.As(err, &e) || e.Kind != InvalidArgument || !strings.Contains(e.Msg, c.want) {
			t.Errorf("%s: got %v, want InvalidArgument mentioning %q", c.name, err, c.want)
		}
	}
	if h.View().State != StateLocked {
		t.Fatalf("State after refused Starts: got %s, want %s", h.View().State, StateLocked)
	}
}

func TestAccountingBucketsSwitchesAndTotals(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(win("Editor", "main.go - 12:30"))
	h.clock.Advance(time.Minute) // before Start: shown, not accounted
	if v := h.View(); v.CurrentClass != "Editor" || len(v.Buckets) != 0 {
		t.Fatalf("outside a session: CurrentClass, Buckets: got %q %+v, want %q and none", v.CurrentClass, v.Buckets, "Editor")
	}
	h.start(t, LevelWarn)
	h.clock.Advance(30 * time.Second)
	h.RecordWindow(win("Editor", "main.go - 12:31")) // same bucket after scrubbing
	h.clock.Advance(30 * time.Second)
	h.RecordWindow(win("Firefox", "news"))
	h.clock.Advance(20 * time.Second)
	h.RecordWindow(Window{Reason: "no window has focus"})
	h.clock.Advance(10 * time.Second)
	h.RecordWindow(win("Editor", "main.go - 12:40"))
	h.clock.Advance(5 * time.Second)
	must(t, h.Complete())
	h.clock.Advance(time.Hour) // review: frozen

	v := h.View()
	want := []Bucket{
		{"Editor", "main.go - #", 65},
		{"Firefox", "news", 20},
		{"", UnavailableTitle, 10},
	}
	if !reflect.DeepEqual(v.Buckets, want) {
		t.Fatalf("buckets %+v, want %+v", v.Buckets, want)
	}
	if v.SwitchCount != 2 {
		t.Fatalf("switches %d, want 2 (editor→firefox, then through no focus back to the editor)", v.SwitchCount)
	}
	var total uint64
	for _, b := range v.Buckets {
		total += b.Seconds
	}
	if total != 95 {
		t.Fatalf("buckets add to %d s, want the 95 s of wall clock", total)
	}
}

// A title of megabytes (a page can set one) is kept as its first
// MaxTitleLen characters, cut at a character and marked: shown, accounted
// and logged that way. A secret in it is redacted before the cut, so a cut
// through the secret cannot save its start from redaction.
func TestLongTitlesAreClipped(t *testing.T) {
	h := newHarness(t)
	h.start(t, LevelWarn)
	secret := "token=" + strings.Repeat("s", 40)
	h.Service.privacy.redact = []*regexp.Regexp{regexp.MustCompile(`token=\w+`)}
	title := strings.Repeat("é", MaxTitleLen-20) + secret + " " + strings.Repeat("x", 1<<20)
	h.RecordWindow(win("Browser", title))
	h.clock.Advance(time.Second)
	v := h.View()
	if n := utf8.RuneCountInString(v.CurrentTitle); n != MaxTitleLen || !strings.HasSuffix(v.CurrentTitle, "…") || !utf8.ValidString(v.CurrentTitle) {
		t.Fatalf("a 1 MiB title: CurrentTitle: got %d characters ending %q, want %d of valid UTF-8 ending …", n, v.CurrentTitle[len(v.CurrentTitle)-12:], MaxTitleLen)
	}
	if strings.Contains(v.CurrentTitle, "token=") {
		t.Fatalf("CurrentTitle: got …%q, want no token= (the secret's start redacted before the cut)", v.CurrentTitle[len(v.CurrentTitle)-40:])
	}
	if len(v.Buckets) != 1 || v.Buckets[0].Title != v.CurrentTitle {
		t.Fatalf("buckets: got %+v, want one titled as shown", v.Buckets)
	}
}

func TestBucketKeysAreBounded(t *testing.T) {
	h := newHarness(t)
	h.start(t, LevelWarn)
	for i := 0; i < MaxBucketKeys+50; i++ {
		h.RecordWindow(win("Browser", fmt.Sprintf("tab %c%d", 'a'+i%26, i)))
		h.clock.Advance(time.Second)
	}
	h.RecordWindow(win("Editor", "done"))
	h.Service.mu.Lock()
	n, other, total := len(h.Service.stats.buckets), h.Service.stats.buckets[otherKey], h.Service.stats.total
	h.Service.mu.Unlock()
	if n != MaxBucketKeys+1 {
		t.Fatalf("bucket keys: got %d, want %d + (other)", n, MaxBucketKeys)
	}
	if other != 50*time.Second {
		t.Fatalf("(other): got %s, want 50s", other)
	}
	if total != time.Duration(MaxBucketKeys+50)*time.Second {
		t.Fatalf("total: got %s, want %s (no time lost to the bound)", total, time.Duration(MaxBucketKeys+50)*time.Second)
	}
}

func TestRestartResumesSessionAndReplaysIdenticalStats(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(win("Editor", "a"))
	id := h.start(t, LevelBlock, "Editor")
	for i, c := range []string{"Firefox", "Editor", "Slack", "Editor"} {
		h.clock.Advance(time.Duration(7+i) * time.Second)
		h.RecordWindow(win(c, "t"))
	}
	h.clock.Advance(3 * time.Second)
	live := h.View()

	n := h.restart(t) // as after kill -9: no shutdown event
	got := n.View()
	if got.SessionID != id || got.State != StateActive || got.Deadline != live.Deadline || got.Enforcement != LevelBlock {
		t.Fatalf("resumed: got %+v, want session %s %s, deadline %d, %s", got, id, StateActive, live.Deadline, LevelBlock)
	}
	if !reflect.DeepEqual(got.Buckets, live.Buckets) || got.SwitchCount != live.SwitchCount {
		t.Fatalf("replayed buckets/switches: got %+v/%d, want the live %+v/%d", got.Buckets, got.SwitchCount, live.Buckets, live.SwitchCount)
	}
	if !reflect.DeepEqual(got.AllowedClasses, []string{"Editor"}) {
		t.Fatalf("AllowedClasses after restart: got %q, want %q", got.AllowedClasses, []string{"Editor"})
	}
	// The re-armed deadline still fires.
	n.clock.Advance(25 * time.Minute)
	if v := n.View(); v.State != StateReview || v.Outcome != OutcomeExpired {
		t.Fatalf("re-armed deadline: State, Outcome: got %s %s, want %s %s", v.State, v.Outcome, StateReview, OutcomeExpired)
	}
}

func TestRestartAfterDeadlineExpiresAtTheDeadline(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(win("Editor", "a"))
	h.start(t, LevelWarn)
	h.Shutdown()
	h.clock.Advance(2 * time.Hour)
	n := h.restart(t)
	v := n.View()
	if v.State != StateReview || v.Outcome != OutcomeExpired {
		t.Fatalf("after restart past deadline: State, Outcome: got %s %s, want %s %s", v.State, v.Outcome, StateReview, OutcomeExpired)
	}
	n.Service.mu.Lock()
	total, unavailable := n.Service.stats.total, n.Service.stats.buckets[unavailableKey]
	n.Service.mu.Unlock()
	if total != 25*time.Minute {
		t.Fatalf("accounted %s, want exactly the 25m timebox", total)
	}
	if unavailable != 25*time.Minute {
		t.Fatalf("downtime after a clean stop credited to unavailable: got %s, want all %s", unavailable, 25*time.Minute)
	}
}

func TestAuditFailureKeepsSummaryPending(t *testing.T) {
	h := newHarness(t)
	id := h.start(t, LevelWarn)
	must(t, h.Complete())
	h.store.failAudit = true
	hash, err := h.End()
	must(t, err)
	v := h.View()
	if hash != "" || v.State != StateLocked || v.AuditPending != 1 || len(v.Problems) != 1 {
		t.Fatalf("failed seal: got hash %q, view %+v, want no hash, %s, AuditPending 1, one problem", hash, v, StateLocked)
	}
	if p := h.store.last().Pending; len(p) != 1 || p[0].SessionID != id {
		t.Fatalf("pending in state.json: got %+v, want session %q", p, id)
	}
	// Space returns; the next start seals it.
	h.store.failAudit = false
	n := h.restart(t)
	if v := n.View(); v.AuditPending != 0 || len(v.Problems) != 0 || v.AuditHead == "" {
		t.Fatalf("after restart: got %+v, want AuditPending 0, no problems, an AuditHead", v)
	}
	if s := h.store.sealed(); len(s) != 1 || s[0].SessionID != id {
		t.Fatalf("chain: got %+v, want session %q alone", s, id)
	}
	// And it is never sealed twice, even if state.json still lists it.
	n2 := &harness{clock: h.clock, store: h.store}
	n2.Service = New(Options{Store: h.store, Clock: h.clock})
	must(t, n2.Recover(Snapshot{State: StateLocked, Pending: []Summary{{SessionID: id}}}))
	if s := h.store.sealed(); len(s) != 1 {
		t.Fatalf("pending summary sealed: got %d entries, want 1 (never twice)", len(s))
	}
}

func TestSnapshotFailureIsAProblemNotARefusal(t *testing.T) {
	h := newHarness(t)
	h.store.failSave = true
	h.start(t, LevelWarn)
	if v := h.View(); v.State != StateActive || len(v.Problems) != 1 || !strings.Contains(v.Problems[0], "state.json") {
		t.Fatalf("after a failed snapshot: got %+v, want %s and one problem naming state.json", v, StateActive)
	}
	h.store.failSave = false
	must(t, h.Complete())
	if v := h.View(); len(v.Problems) != 0 {
		t.Fatalf("Problems after a good save: got %q, want none", v.Problems)
	}
}

func TestListenerToldAfterEveryChange(t *testing.T) {
	h := newHarness(t)
	before := len(h.rec.views)
	must(t, h.Plan())
	h.RecordWindow(win("Editor", "x"))
	h.start(t, LevelWarn)
	if got := len(h.rec.views) - before; got != 3 {
		t.Fatalf("listener told: got %d times, want 3, once per change", got)
	}
	if last := h.rec.views[len(h.rec.views)-1]; last.State != StateActive {
		t.Fatalf("State the listener saw last: got %s, want %s", last.State, StateActive)
	}
}

func TestBreakGlassPermitsAbandonAfterHold(t *testing.T) {
	h := newHarness(t)
	h.start(t, LevelLocked)
	if err := h.Abandon("bored"); !isNotPermitted(err) {
		t.Fatalf("Abandon at locked: got %v, want NotPermitted", err)
	}
	wait, err := h.BreakGlass("the building is on fire")
	must(t, err)
	if wait != 300 {
		t.Fatalf("hold %d s, want 300", wait)
	}
	h.clock.Advance(299 * time.Second)
	if err := h.Abandon(""); !isNotPermitted(err) || !strings.Contains(err.Error(), "1s left") {
		t.Fatalf("Abandon a second before the hold ends: got %v, want NotPermitted saying 1s left", err)
	}
	if again, _ := h.BreakGlass("again"); again != 1 {
		t.Fatalf("a second BreakGlass: got %d s left, want 1 (the hold not restarted)", again)
	}
	h.clock.Advance(time.Second)
	// The hold's end is announced: a panel offers Abandon at once.
	h.rec.mu.Lock()
	last := h.rec.views[len(h.rec.views)-1]
	h.rec.mu.Unlock()
	if !slices.Contains(last.Permitted, string(MethodAbandon)) {
		t.Fatalf("the last view at the hold's end: Permitted: got %v, want it to hold %s", last.Permitted, MethodAbandon)
	}
	must(t, h.Abandon("fire"))
	_, err = h.End()
	must(t, err)
	if s := h.store.sealed(); !s[0].BreakGlass || s[0].Outcome != OutcomeAbandoned {
		t.Fatalf("summary: got %+v, want BreakGlass and %s", s[0], OutcomeAbandoned)
	}
}

func isNotPermitted(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == NotPermitted
}

func TestBrokenChainIsAProblemUntilItVerifies(t *testing.T) {
	h := newHarness(t)
	h.store.broken = "line 2 (seq 2): hash does not match its contents (the line was altered)"
	n := h.restart(t)
	if p := n.View().Problems; len(p) != 1 || !strings.Contains(p[0], "line 2 (seq 2)") {
		t.Fatalf("Problems: got %q, want one naming line 2 (seq 2)", p)
	}
	h.store.broken = ""
	if _, err := n.VerifyAudit(); err != nil {
		t.Fatalf("VerifyAudit: %v", err)
	}
	if p := n.View().Problems; len(p) != 0 {
		t.Fatalf("Problems after VerifyAudit: got %q, want none (the sentence outlived the damage)", p)
	}
}

func TestImplausibleRawLogLinesAreNotCounted(t *testing.T) {
	h := newHarness(t)
	h.RecordWindow(win("Editor", "a"))
	id := h.start(t, LevelWarn)
	h.clock.Advance(time.Minute)
	h.RecordWindow(win("Firefox", "b"))
	// A damaged line decoded as an event from 1970, and one from next year.
	h.store.events[id] = append(h.store.events[id],
		FocusEvent{AtUnixMillis: 0, Available: true, Class: "Ghost"},
		FocusEvent{AtUnixMillis: h.clock.Now().Add(365 * 24 * time.Hour).UnixMilli(), Available: true, Class: "Ghost"})
	h.clock.Advance(time.Minute)
	n := h.restart(t)
	n.RecordWindow(win("Editor", "a"))
	v := n.View()
	var total uint64
	for _, b := range v.Buckets {
		total += b.Seconds
		if b.Class == "Ghost" {
			t.Fatalf("buckets: got %+v, want no Ghost (implausible lines are not counted)", v.Buckets)
		}
	}
	if total != 120 || len(v.Problems) != 1 || !strings.Contains(v.Problems[0], "2 line(s)") {
		t.Fatalf("total, Problems: got %d s %q, want 120 s and one problem naming 2 line(s)", total, v.Problems)
	}
}

func TestReadOnlyStateDirIsAProblemFromTheStart(t *testing.T) {
	h := newHarness(t)
	h.store.failSave = true
	n := h.restart(t) // nothing to save at start, but nothing could be
	if p := n.View().Problems; len(p) != 1 || !strings.Contains(p[0], "cannot be written") {
		t.Fatalf("Problems: got %q, want one saying %q", p, "cannot be written")
	}
	h.store.failSave = false
	must(t, n.Plan())
	if p := n.View().Problems; len(p) != 0 {
		t.Fatalf("Problems after a good save: got %q, want none (the sentence outlived the read-only disk)", p)
	}
}
