package service

import (
	"context"
	"errors"
	"time"
)

// enforceTimeout bounds one enforcement (iconify, then activate), so a
// wedged X server never holds anything up for long.
const enforceTimeout = 2 * time.Second

// enforce iconifies the drifting window (the guard leaves it alone if it no
// longer has focus), counts the iconify, and activates the last on-task
// window, unless that is the same window.
func (s *Service) enforce(id string, target, back Window) {
	s.onGuard(func(ctx context.Context) {
		if err := s.guard.MinimizeWindow(ctx, target.ID); err != nil {
			if !errors.Is(err, ErrNotActive) {
				s.log.Warn("iconifying the drifting window failed", "session_id", id, "class", target.Class, "err", err)
			}
			return
		}
		s.recordMinimize(id)
		// The last on-task window may be this very window under an on-task
		// title (a browser tab that turned into a distraction): raising it
		// again would undo the iconify.
		if back.ID != "" && back.ID != target.ID {
			s.handBack(ctx, back)
		}
	})
}

// activate hands focus to window back.
func (s *Service) activate(back Window) {
	s.onGuard(func(ctx context.Context) { s.handBack(ctx, back) })
}

func (s *Service) handBack(ctx context.Context, back Window) {
	if err := s.guard.ActivateWindow(ctx, back.ID); err != nil {
		s.log.Warn("handing focus back to work failed", "err", err)
	}
}

// onGuard runs act on its own goroutine, never under the lock, bounded by
// enforceTimeout so a wedged X server holds nothing up.
func (s *Service) onGuard(act func(ctx context.Context)) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.bgStopped {
		return // shutting down: nothing new starts
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		ctx, cancel := context.WithTimeout(context.Background(), enforceTimeout)
		defer cancel()
		act(ctx)
	}()
}

func (s *Service) recordMinimize(id string) {
	s.mu.Lock()
	if s.sessionID != id || s.stats == nil || s.state != StateActive {
		s.mu.Unlock()
		return
	}
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.account(&w, FocusEvent{AtUnixMillis: now.UnixMilli(), Mark: MarkMinimized})
	}
	s.commitUnlocks(w)
}
