//go:build linux

package x11

import (
	"testing"

	"github.com/antidrift/antidrift/internal/testenv"
)

func TestZZStartXLoop(t *testing.T) {
	for i := 0; i < 40; i++ {
		t.Run("x", func(t *testing.T) { testenv.StartX(t) })
	}
}
