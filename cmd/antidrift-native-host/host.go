package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/antidrift/antidrift/internal/nativemsg"
)

// daemon is what the host tells antidriftd: org.antidrift.Evidence1's
// ReportTab and ForgetTabs.
type daemon interface {
	ReportTab(browser string, r report) error
	ForgetTabs(browser string) error
}

// message is one message from the extension. "tab" is the active tab of
// the browser's focused window; "none" says no browser window has focus.
type message struct {
	Type    string `json:"type"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	Private bool   `json:"private"`
	// PrivateOptIn: the person opted in, in this browser's extension, to
	// reporting private tabs like any other. Without it a private tab is
	// reported as only "private".
	PrivateOptIn bool `json:"private_opt_in"`
}

// report is a tab as the host passes it on: the address without query,
// fragment or password.
type report struct {
	URL, Title string
	Private    bool
}

// decode turns one message into the report to pass on, or says why it is
// not one. It is the host's edge: the query and the fragment end here.
func decode(raw []byte) (report, error) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		return report{}, fmt.Errorf("not a JSON message: %v", err)
	}
	switch m.Type {
	case "none":
		return report{}, nil
	case "tab":
	default:
		return report{}, fmt.Errorf("unknown message type %q", clip(m.Type, 40))
	}
	if m.Private && !m.PrivateOptIn {
		return report{Private: true}, nil
	}
	u, err := url.Parse(m.URL)
	if err != nil || u.Scheme == "" {
		return report{}, fmt.Errorf("the tab's url is not an address")
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment, u.User = "", false, "", "", nil
	return report{URL: u.String(), Title: m.Title, Private: m.Private}, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// host relays one browser's extension to the daemon, and the daemon's word
// back to the extension.
type host struct {
	browser string
	d       daemon
	log     io.Writer // the browser's console for the host (its stderr)

	outMu sync.Mutex
	out   io.Writer // to the extension
}

// run reads the extension's messages until the browser closes the port,
// passing each report on; then it tells the daemon the browser is gone. A
// malformed message is named on the log and skipped; a message over 1 MiB
// or a torn one ends the host (the stream cannot be read past it).
func (h *host) run(in io.Reader) error {
	defer func() {
		if err := h.d.ForgetTabs(h.browser); err != nil {
			fmt.Fprintf(h.log, "antidrift-native-host: telling antidrift the browser is gone: %v\n", err)
		}
	}()
	for {
		raw, err := nativemsg.Read(in)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		r, err := decode(raw)
		if err != nil {
			fmt.Fprintf(h.log, "antidrift-native-host: skipping a message: %v\n", err)
			continue
		}
		if err := h.d.ReportTab(h.browser, r); err != nil {
			fmt.Fprintf(h.log, "antidrift-native-host: %v\n", err)
		}
	}
}

// send writes msg (JSON) to the extension.
func (h *host) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	h.outMu.Lock()
	defer h.outMu.Unlock()
	return nativemsg.Write(h.out, b)
}

// browserOf names the browser that started the host from its arguments:
// Chromium passes the calling extension's origin (chrome-extension://…/),
// Firefox the path of the host manifest and the extension's id.
func browserOf(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "chrome-extension://") {
			return "chromium"
		}
	}
	return "firefox"
}
