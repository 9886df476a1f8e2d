package caldav

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-webdav/caldav"
)

// Why a REPORT of our own: go-webdav (v0.6.0) sends a calendar-query's
// comp-filters but not their prop-filters, so it can only ask for every
// VTODO, done ones included, and a list kept for years holds thousands of
// those — more than MaxReply. Asking the server for the open ones
// (COMPLETED not defined, RFC 4791 section 9.7.2) or for one UID keeps the
// reply small. A server that refuses the filter gets go-webdav's plain
// query instead, filtered here.

// filter is which VTODOs to ask the server for.
type filter struct {
	open bool   // only those without COMPLETED
	uid  string // only those whose UID contains this ("" any)
}

func (f filter) xml() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>
<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
<D:prop><D:getetag/><C:calendar-data/></D:prop>
<C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VTODO">`)
	if f.open {
		b.WriteString(`<C:prop-filter name="COMPLETED"><C:is-not-defined/></C:prop-filter>`)
	}
	if f.uid != "" {
		b.WriteString(`<C:prop-filter name="UID"><C:text-match collation="i;octet">`)
		xml.EscapeText(&b, []byte(f.uid))
		b.WriteString(`</C:text-match></C:prop-filter>`)
	}
	b.WriteString(`</C:comp-filter></C:comp-filter></C:filter>
</C:calendar-query>`)
	return b.String()
}

// multistatus is the part of a REPORT's reply read here.
type multistatus struct {
	Responses []struct {
		Href     string `xml:"DAV: href"`
		Propstat []struct {
			Prop struct {
				ETag string `xml:"DAV: getetag"`
				Data string `xml:"urn:ietf:params:xml:ns:caldav calendar-data"`
			} `xml:"DAV: prop"`
			Status string `xml:"DAV: status"`
		} `xml:"DAV: propstat"`
	} `xml:"DAV: response"`
}

// errUnreadableTask is a calendar object in the list that is no
// iCalendar text antidrift can read.
var errUnreadableTask = errors.New("a task antidrift cannot read")

// report asks the collection for the VTODOs f selects. A server that
// refuses the filter itself (400, 403 for an unsupported filter, 415,
// 422, 501) is asked with go-webdav's unfiltered query.
func (s *Source) report(ctx context.Context, f filter) ([]todo, error) {
	req, err := http.NewRequestWithContext(ctx, "REPORT", s.url.String(), strings.NewReader(f.xml()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", `application/xml; charset="utf-8"`)
	req.Header.Set("Depth", "1")
	resp, err := (&doer{client: s.http, auth: s.credentials}).Do(req)
	var se *statusError
	if errors.As(err, &se) {
		switch se.code {
		case http.StatusBadRequest, http.StatusForbidden, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity, http.StatusNotImplemented:
			return s.queryAll(ctx)
		}
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusMultiStatus {
		return nil, errors.New("not a multistatus")
	}
	// Read whole (bounded) before parsing: a reply over MaxReply is then
	// refused after reading it, not after parsing it.
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseMultistatus(body)
}

// parseMultistatus reads a calendar-query's reply: each response's href,
// ETag and calendar object, mapped. A calendar object that is no
// iCalendar fails the whole reply (errUnreadableTask) rather than leaving
// a task out unsaid; one without a single VTODO or without UID is no task.
func parseMultistatus(body []byte) ([]todo, error) {
	var ms multistatus
	if err := xml.Unmarshal(body, &ms); err != nil {
		return nil, err
	}
	var out []todo
	for _, r := range ms.Responses {
		for _, ps := range r.Propstat {
			if !strings.Contains(ps.Status, " 200") || ps.Prop.Data == "" {
				continue
			}
			cal, item, err := decodeObject([]byte(ps.Prop.Data), time.Local)
			if errors.Is(err, errNoUID) || errors.Is(err, errNotATask) {
				continue // no task, or one that could never be written back
			}
			if err != nil {
				return nil, errUnreadableTask
			}
			u, err := url.Parse(r.Href)
			if err != nil || u.Path == "" {
				return nil, errors.New("a bad href")
			}
			etag := ps.Prop.ETag
			if uq, err := strconv.Unquote(etag); err == nil {
				etag = uq
			}
			comp, _ := masterTodo(cal)
			item.Version = etag
			out = append(out, todo{path: u.Path, etag: etag, cal: cal, comp: comp, item: item})
		}
	}
	return out, nil
}

// queryAll is go-webdav's calendar-query for every VTODO, for servers
// that refuse a prop-filter.
func (s *Source) queryAll(ctx context.Context) ([]todo, error) {
	var objs []caldav.CalendarObject
	err := guard(func() (err error) {
		objs, err = s.cal.QueryCalendar(ctx, s.url.Path, &caldav.CalendarQuery{
			CompRequest: caldav.CalendarCompRequest{Name: "VCALENDAR", AllProps: true, AllComps: true},
			CompFilter:  caldav.CompFilter{Name: "VCALENDAR", Comps: []caldav.CompFilter{{Name: "VTODO"}}},
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]todo, 0, len(objs))
	for _, o := range objs {
		if o.Data == nil {
			continue
		}
		comp, err := masterTodo(o.Data)
		if err != nil {
			continue // not a task (the filter is the server's; trust nothing)
		}
		item, err := mapTodo(comp, time.Local)
		if err != nil {
			continue // no UID: it could never be written back
		}
		item.Version = o.ETag
		out = append(out, todo{path: o.Path, etag: o.ETag, cal: o.Data, comp: comp, item: item})
	}
	return out, nil
}
