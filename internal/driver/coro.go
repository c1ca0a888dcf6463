package driver

import (
	"errors"
	"iter"
)

// program runs a Script.Program as Steps. A client on a goroutine or a thread of its
// own runs the program whole within Start, each round trip waited for in place. On an
// event loop a program cannot wait in place, so it runs as a coroutine (coro): its
// code, unchanged, on the loop's thread, which it hands back at each round trip and
// pause as a Stepper returns Await or Pause. The hand-off is a direct switch between
// two goroutines on one thread (iter.Pull2), not a trip through the scheduler.
type program func(*Session) error

func (p program) Start(s *Session) (Step, error) {
	c := s.c
	if !c.onLoop {
		s.co = nil
		return Finished, p(s)
	}
	if c.co == nil {
		c.co = newCoro(s)
	}
	s.co, c.co.run = c.co, p
	return c.co.resume(nil)
}

func (p program) Resume(s *Session, answer error) (Step, error) { return s.co.resume(answer) }

// coro is a client's coroutine for its programs on an event loop.
type coro struct {
	next   func() (Step, error, bool)
	stop   func()
	yield  func(Step, error) bool
	run    program // the transaction under way
	answer error   // what the round trip it is resumed in returns
}

// errAbandoned is what a program's round trips return once its connection is lost
// on an event loop: it is to return, and nothing it sends goes out.
var errAbandoned = errors.New("the connection was lost")

func newCoro(s *Session) *coro {
	co := &coro{}
	co.next, co.stop = iter.Pull2(func(yield func(Step, error) bool) {
		co.yield = yield
		for {
			if err := co.run(s); !yield(Finished, err) {
				return
			}
		}
	})
	return co
}

// resume runs the program until it waits again or ends.
func (co *coro) resume(answer error) (Step, error) {
	co.answer = answer
	next, err, ok := co.next()
	if !ok {
		return Finished, errAbandoned
	}
	return next, err
}

// abandon ends the client's coroutine on its event loop, if it has one: the program
// under way, whose connection is lost, sees its round trips fail until it returns.
// The loop makes a new one when the client next runs a program.
func (c *client) abandon() {
	if c.co != nil {
		c.co.stop()
		c.co = nil
	}
}
