package health

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zlink-systems/zlink-etcd/session"
)

// Session is what SessionCheck reads; *session.Session implements it (a
// node that replaces its session implements it over the current one).
type Session interface {
	Valid() bool
	Status() session.Status
}

// SessionCheck is the readiness check "session": the owner-lease session
// runs and its lease may be trusted now. It fails when the session ended
// (with why) or when no renewal was confirmed within TTL − fencing margin
// (with the last confirmed renewal and the last renewal error): the
// process must not act on the lease then.
func SessionCheck(s Session) Check {
	return Check{Name: "session", Run: func(context.Context) error {
		if s.Valid() {
			return nil
		}
		st := s.Status()
		if st.Err != nil {
			return fmt.Errorf("the owner-lease session of %q ended at %s: %w", st.Token.OwnerID, st.EndedAt.Format(time.RFC3339), st.Err)
		}
		err := fmt.Errorf("the owner lease of %q is not trusted: its last renewal confirmed was sent at %s, trusted until %s",
			st.Token.OwnerID, st.LastRenewal.Format(time.RFC3339Nano), st.TrustedUntil.Format(time.RFC3339Nano))
		if st.LastError != nil {
			err = fmt.Errorf("%w; %d renewals failed since, the last with: %w", err, st.Failures, st.LastError)
		}
		return err
	}}
}

// StoreFailer is what AutoConnectCheck reads; *autoconnect.Reconciler
// implements it.
type StoreFailer interface {
	StoreFailed() bool
}

// AutoConnectCheck is the readiness check "autoconnect": the auto-connect
// loop's last tick reached the store (it is not in store failure, during
// which it keeps its connections but cannot follow the mesh).
func AutoConnectCheck(r StoreFailer) Check {
	return Check{Name: "autoconnect", Run: func(context.Context) error {
		if r.StoreFailed() {
			return errors.New("auto-connect's last tick could not read the store: connections are kept and the loop retries")
		}
		return nil
	}}
}
