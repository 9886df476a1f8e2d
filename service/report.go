package service

import (
	"fmt"
	"time"
)

// MaxReportDays bounds a Report call's range: a year and a month, so one
// call reads at most about a year of the record.
const MaxReportDays = 400

// Report returns the JSON report (the report package's documented schema)
// of the sessions that started in [sinceUnix, untilUnix), for panels that
// show today's totals without running a process. It reads the sealed
// record like History, so every state permits it; the work is the
// Reporter's, done without the core's lock.
func (s *Service) Report(sinceUnix, untilUnix int64) (string, error) {
	switch {
	case sinceUnix < 0:
		return "", invalid("since_unix must not be negative; got %d", sinceUnix)
	case untilUnix <= sinceUnix:
		return "", invalid("until_unix must be after since_unix; got until_unix %d, since_unix %d", untilUnix, sinceUnix)
	case untilUnix-sinceUnix > MaxReportDays*24*3600:
		return "", invalid("the range may be at most %d days; got %d days", MaxReportDays, (untilUnix-sinceUnix+24*3600-1)/(24*3600))
	}
	if err := s.permitted(MethodReport); err != nil {
		return "", err
	}
	if s.reporter == nil {
		return "", &Error{Kind: Storage, Msg: "reports are not available from this daemon"}
	}
	data, err := s.reporter.Report(time.Unix(sinceUnix, 0), time.Unix(untilUnix, 0))
	if err != nil {
		return "", &Error{Kind: Storage, Msg: fmt.Sprintf("could not build the report: %v", err)}
	}
	return string(data), nil
}
