package session

import (
	"log/slog"
	"time"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Defaults of Options: the framework's owner-lease defaults.
const (
	DefaultTTL           = 15 * time.Second
	DefaultRenewInterval = 5 * time.Second
	DefaultRenewTimeout  = 3 * time.Second
	DefaultFencingMargin = 5 * time.Second
)

// Codes of the InputErrors New and Adopt answer for bad Options.
const (
	// CodeTiming: a duration is negative, or the timing rule
	// RenewInterval + RenewTimeout < TTL − FencingMargin does not hold
	// (Range).
	CodeTiming = "session.timing"
)

// Options configure a Session. The zero value is usable: every zero
// duration means its default.
type Options struct {
	// TTL is the lease's time to live, asked for on every claim and renewal.
	TTL time.Duration
	// RenewInterval is the time between scheduled renewals (fixed rate).
	RenewInterval time.Duration
	// RenewTimeout bounds each claim or renewal attempt.
	RenewTimeout time.Duration
	// FencingMargin is taken off the lease time a renewal confirmed, to get
	// the deadline until which the lease may be trusted.
	FencingMargin time.Duration
	// Clock is the session's clock (deadlines, timeouts, schedule); nil
	// means clock.System(). Tests pass a *clock.Manual.
	Clock clock.Clock
	// Logger receives the session's logs: Warn for failed renewals and for
	// a session that ends on a lost lease or a passed deadline, Info for
	// recoveries and other ends, Debug for every renewal. nil discards.
	Logger *slog.Logger
	// OnRenewal, when set, is called (synchronously, so it must be quick)
	// after every claim or renewal attempt. Metrics attach here.
	OnRenewal func(Renewal)
}

// Renewal describes one claim or renewal attempt (Options.OnRenewal).
type Renewal struct {
	// Token is the session's token (zero for a claim that failed).
	Token location.OwnerToken
	// Sent and Answered are the session-clock times of the request and its
	// answer (or failure).
	Sent, Answered time.Time
	// Kind is the store's answer (KindClaimed, KindRenewed, KindStale, …);
	// empty when Err is set.
	Kind location.ResultKind
	// Err is the attempt's error, nil when the store answered.
	Err error
	// TrustedUntil is the session's deadline after the attempt.
	TrustedUntil time.Time
	// Kept reports that the renewal went through the store's
	// location.OwnerLeaseKeeper.
	Kept bool
}

// withDefaults returns o with every zero field set to its default, or an
// *location.InputError when a duration is negative or the timing rule
// does not hold.
func (o Options) withDefaults() (Options, error) {
	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"TTL", &o.TTL, DefaultTTL},
		{"RenewInterval", &o.RenewInterval, DefaultRenewInterval},
		{"RenewTimeout", &o.RenewTimeout, DefaultRenewTimeout},
		{"FencingMargin", &o.FencingMargin, DefaultFencingMargin},
	}
	for _, d := range durations {
		switch {
		case *d.v < 0:
			return Options{}, location.NewRangeError(CodeTiming, "session %s %v is negative; it must be positive (0 means %v)", d.name, *d.v, d.def)
		case *d.v == 0:
			*d.v = d.def
		}
	}
	if _, ok := location.WholeMillis(o.TTL); !ok {
		return Options{}, location.NewRangeError(CodeTiming, "session TTL %v is under one millisecond", o.TTL)
	}
	if o.RenewInterval+o.RenewTimeout >= o.TTL-o.FencingMargin {
		return Options{}, location.NewRangeError(CodeTiming,
			"session timing: RenewInterval + RenewTimeout (%v + %v = %v) must be less than TTL − FencingMargin (%v − %v = %v), so that a renewal sent on time and answered within its timeout lands before the lease stops being trusted",
			o.RenewInterval, o.RenewTimeout, o.RenewInterval+o.RenewTimeout, o.TTL, o.FencingMargin, o.TTL-o.FencingMargin)
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}
