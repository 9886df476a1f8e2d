package service

import (
	"errors"
	"fmt"
	"time"
)

// MaxReportDays bounds a Report call's range: a year and a month, so one
// call reads at most about a year of the record.
const MaxReportDays = 400

// MaxUnixTime is the last second of the year 9999 (UTC): the latest time
// a date can be written as (RFC 3339, the report's JSON), so the latest a
// caller may name.
const MaxUnixTime = 253402300799

// Report returns the JSON report (the report package's documented schema)
// of the sessions that started in [sinceUnix, untilUnix), for panels that
// show today's totals without running a process. It reads the sealed
// record like History, so every state permits it; the work is the
// Reporter's, done without the core's lock.
func (s *Service) Report(sinceUnix, untilUnix int64) (string, error) {
	return s.report(MethodReport, sinceUnix, untilUnix, "")
}

// ReportDevice is Report narrowed to one machine sharing sync_dir, named
// by its device_name, hostname or device id; "" is every machine, as
// Report. A name no machine has is refused naming the machines there are.
func (s *Service) ReportDevice(sinceUnix, untilUnix int64, device string) (string, error) {
	device, err := cleanText("device", device, false)
	if err != nil {
		return "", err
	}
	return s.report(MethodReportDevice, sinceUnix, untilUnix, device)
}

func (s *Service) report(m Method, sinceUnix, untilUnix int64, device string) (string, error) {
	// Each bound is checked alone before any arithmetic on the two: with
	// both within 0…MaxUnixTime no sum or difference below can overflow.
	for _, arg := range []struct {
		name string
		v    int64
	}{{"since_unix", sinceUnix}, {"until_unix", untilUnix}} {
		if arg.v < 0 || arg.v > MaxUnixTime {
			return "", (&Fault{Argument: arg.name, Rule: RuleTime, Got: arg.v, Limit: int64(MaxUnixTime)}).err()
		}
	}
	switch {
	case untilUnix <= sinceUnix:
		return "", (&Fault{Argument: "until_unix", Rule: RuleAfter, Got: untilUnix, Limit: sinceUnix}).err()
	case untilUnix-sinceUnix > MaxReportDays*24*3600:
		return "", (&Fault{Argument: "until_unix", Rule: RuleDays, Got: (untilUnix - sinceUnix + 24*3600 - 1) / (24 * 3600), Limit: MaxReportDays}).err()
	}
	if err := s.permitted(m); err != nil {
		return "", err
	}
	if s.reporter == nil {
		return "", &Error{Kind: Storage, Msg: "reports are not available from this daemon"}
	}
	data, err := s.reporter.Report(time.Unix(sinceUnix, 0), time.Unix(untilUnix, 0), device)
	var none *NoSuchDevice
	if errors.As(err, &none) {
		return "", (&Fault{Argument: "device", Rule: RuleDevice, Got: none.Device, Choices: none.Devices}).err()
	}
	if err != nil {
		return "", &Error{Kind: Storage, Msg: fmt.Sprintf("could not build the report: %v", err)}
	}
	return string(data), nil
}
