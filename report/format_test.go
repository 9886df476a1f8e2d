package report

import (
	"testing"

	"github.com/antidrift/antidrift/service"
)

func TestBucketNameReadsARemainderAsOne(t *testing.T) {
	for _, c := range []struct {
		b    Bucket
		want string
	}{
		{Bucket{Class: "firefox", Title: "Design doc #"}, "firefox “Design doc #”"},
		{Bucket{Class: "firefox", Title: service.OtherTitlesTitle}, "firefox (other titles)"},
		{Bucket{Title: service.AwayTitle}, "(away)"},
		{Bucket{Class: "KeePassXC"}, "KeePassXC"},
	} {
		if got := bucketName(c.b); got != c.want {
			t.Errorf("bucketName(%+v): got %q, want %q", c.b, got, c.want)
		}
	}
}
