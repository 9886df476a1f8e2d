package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/antidrift/antidrift/internal/nativemsg"
)

// daemon is what the host tells antidriftd: org.antidrift.Evidence1's
// ReportTab, TabBlocked and ForgetTabs.
type daemon interface {
	ReportTab(browser string, r report) error
	TabBlocked(browser string, tabID int64) error
	ForgetTabs(browser string) error
}

// noTabID is a report's tab id when it names no tab (the WebExtension
// API's tabs.TAB_ID_NONE).
const noTabID = -1

// message is one message from the extension. "tab" is the active tab of
// the browser's focused window; "none" says no browser window has focus;
// "blocked" says the extension replaced tab TabID's page as a BlockTab
// ordered.
type message struct {
	Type  string `json:"type"`
	TabID *int64 `json:"tab_id"`
	// Scheme, Host and Path are the tab's address as the browser's own URL
	// parser split it (protocol without ":", hostname, pathname): the
	// host passes them on as they are, and the daemon makes the site of
	// them. No query, fragment or password is ever in them.
	Scheme  string `json:"scheme"`
	Host    string `json:"host"`
	Path    string `json:"path"`
	Title   string `json:"title"`
	Private bool   `json:"private"`
	// PrivateOptIn: the person opted in, in this browser's extension, to
	// reporting private tabs like any other. Without it a private tab is
	// reported as only "private".
	PrivateOptIn bool `json:"private_opt_in"`
}

// report is a tab as the host passes it on.
type report struct {
	TabID              int64
	Scheme, Host, Path string
	Title              string
	Private            bool
}

// decoded is what one message asks of the daemon: a report, or a
// block's confirmation.
type decoded struct {
	report  report
	blocked bool
}

// decode turns one message into what to pass on, or says why it is not
// one. It is the host's edge: it parses no address (the browser did), and
// refuses parts that a browser's parse never gives (a query or a fragment
// in them) so that none is passed on.
func decode(raw []byte) (decoded, error) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		return decoded{}, fmt.Errorf("not a JSON message: %v", err)
	}
	switch m.Type {
	case "none":
		return decoded{report: report{TabID: noTabID}}, nil
	case "blocked":
		if m.TabID == nil || *m.TabID < 0 {
			return decoded{}, fmt.Errorf("a block's confirmation without a tab id")
		}
		return decoded{report: report{TabID: *m.TabID}, blocked: true}, nil
	case "tab":
	default:
		return decoded{}, fmt.Errorf("unknown message type %q", clip(m.Type, 40))
	}
	if m.Private && !m.PrivateOptIn {
		return decoded{report: report{TabID: noTabID, Private: true}}, nil
	}
	if m.Scheme == "" {
		return decoded{}, fmt.Errorf("the tab has no scheme (an extension older than this host sends a url: update it)")
	}
	if strings.ContainsAny(m.Scheme+m.Host+m.Path, "?#") {
		return decoded{}, fmt.Errorf("the tab's address holds a query or a fragment, which a browser's parse never gives")
	}
	id := int64(noTabID)
	if m.TabID != nil && *m.TabID >= 0 {
		id = *m.TabID
	}
	return decoded{report: report{TabID: id, Scheme: m.Scheme, Host: m.Host, Path: m.Path, Title: m.Title, Private: m.Private}}, nil
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
		m, err := decode(raw)
		if err != nil {
			fmt.Fprintf(h.log, "antidrift-native-host: skipping a message: %v\n", err)
			continue
		}
		if m.blocked {
			err = h.d.TabBlocked(h.browser, m.report.TabID)
		} else {
			err = h.d.ReportTab(h.browser, m.report)
		}
		if err != nil {
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
