package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/authpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
)

// rootName is etcd's administrator: its user and its role.
const rootName = "root"

// authCommand sets up etcd authentication for the store.
func authCommand() command {
	return command{
		name:    "auth",
		summary: "set up etcd authentication for the store: a prefix-scoped role and a certificate-only user (idempotent)",
		usage:   " setup",
		help: `'auth setup' makes the cluster ready for a least-privilege store, and
changes only what is missing, so that it can run again at any time (a
Kubernetes Job, say):

  1. the role --role, with readwrite on the key range of --prefix
     ([prefix, prefix end): the store's root, where the command's scratch
     prefixes live too) and nothing else;
  2. the user --user, certificate-only: no password; a client
     authenticates as it with a certificate whose CommonName is the user
     name;
  3. the role granted to the user;
  4. authentication, enabled unless it is: etcd needs the user root with
     the role root first, which it creates when missing (certificate-only,
     or with ETCDCTL_PASSWORD when it runs as root with a password).

It runs as etcd's root user: with a client certificate whose CommonName is
root (--cert/--key or ETCDCTL_CERT/ETCDCTL_KEY), or with root's password
(ETCDCTL_USER=root and ETCDCTL_PASSWORD, or --user/--password given before
'auth': after it, --user names the user to create). It prints what it
did, never a password or key.`,
		ownFlags: []string{"user", "password"},
		flags: func(fs *flag.FlagSet) runFunc {
			role := fs.String("role", "zlink", "the store's role: readwrite on --prefix")
			user := fs.String("user", "zlink", "the store's user (certificate-only: its certificate's CommonName)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) != 1 || args[0] != "setup" {
					return usageErrorf("usage: zlinketcd auth setup [--role ROLE] [--user USER] [--prefix PREFIX]")
				}
				for flagName, v := range map[string]string{"--role": *role, "--user": *user} {
					if v == "" || strings.ContainsAny(v, " \t\n:") {
						return usageErrorf("%s %q must be a non-empty name without spaces or ':'", flagName, v)
					}
					if v == rootName {
						return usageErrorf("%s must not be root: the store gets no administrator rights", flagName)
					}
				}
				s, err := e.open(ctx, sessionOptions{})
				if err != nil {
					return err
				}
				defer s.close()
				return authSetup(ctx, e.stdout, s, *role, *user)
			}
		},
	}
}

// authSetup creates what is missing of the store's role, user and grant,
// and enables authentication.
func authSetup(ctx context.Context, w io.Writer, s *session, role, user string) error {
	a := &authStep{ctx: ctx, s: s, w: w}
	admin, how := s.userName()
	if admin == "" {
		admin, how = "nobody", " (no --user and no client certificate)"
	}
	fmt.Fprintf(w, "auth setup: on %s as %s%s\n", s.describe, admin, how)
	status, err := do(a, func(ctx context.Context) (*clientv3.AuthStatusResponse, error) { return s.client.AuthStatus(ctx) })
	if err != nil {
		return a.fail("read the authentication status", err)
	}
	if status.Enabled && admin != rootName {
		return fmt.Errorf("authentication is enabled and auth setup needs etcd's root user, not %s%s: use a client certificate whose CommonName is root, or ETCDCTL_USER=root with ETCDCTL_PASSWORD", admin, how)
	}
	if !status.Enabled && admin != rootName {
		return fmt.Errorf("auth setup enables authentication only as etcd's root user, not %s%s (otherwise nobody could administer the cluster afterwards): use a client certificate whose CommonName is root, or ETCDCTL_USER=root with ETCDCTL_PASSWORD", admin, how)
	}
	if err := a.role(role); err != nil {
		return err
	}
	if err := a.grant(role, s.cfg.Prefix); err != nil {
		return err
	}
	if err := a.user(user, ""); err != nil {
		return err
	}
	if err := a.userRole(user, role); err != nil {
		return err
	}
	if status.Enabled {
		fmt.Fprintf(w, "  authentication: already enabled\n")
	} else {
		if err := a.user(rootName, s.cfg.Password); err != nil {
			return err
		}
		if err := a.userRole(rootName, rootName); err != nil {
			return err
		}
		if _, err := do(a, func(ctx context.Context) (*clientv3.AuthEnableResponse, error) { return s.client.AuthEnable(ctx) }); err != nil {
			return a.fail("enable authentication", err)
		}
		fmt.Fprintf(w, "  authentication: enabled\n")
	}
	fmt.Fprintf(w, "auth setup: done: user %s (certificate-only) has role %s with readwrite on %s\n", user, role, s.cfg.Prefix)
	return nil
}

// authStep runs the requests of auth setup under the run's guard.
type authStep struct {
	ctx context.Context
	s   *session
	w   io.Writer
}

// do runs one request of a.
func do[T any](a *authStep, f func(ctx context.Context) (T, error)) (T, error) {
	return call(a.s.guard, a.ctx, f)
}

// fail explains a failed step.
func (a *authStep) fail(what string, err error) error {
	if c := a.s.guard.cause(); c != nil {
		return c
	}
	if errors.Is(err, rpctypes.ErrPermissionDenied) || strings.Contains(err.Error(), rpctypes.ErrPermissionDenied.Error()) {
		user, how := a.s.userName()
		return fmt.Errorf("%s: permission denied: auth setup needs etcd's root user, not %q%s", what, user, how)
	}
	return fmt.Errorf("%s: %s", what, a.s.explainText(err, "read"))
}

// exists reads what ("role zlink", "user root") with get and reports
// whether it exists, saying so when it does; notFound is etcd's answer when
// it does not.
func (a *authStep) exists(what string, notFound error, get func(ctx context.Context) error) (bool, error) {
	_, err := do(a, func(ctx context.Context) (struct{}, error) { return struct{}{}, get(ctx) })
	switch {
	case err == nil:
		fmt.Fprintf(a.w, "  %s: exists\n", what)
		return true, nil
	case !isNotFound(err, notFound):
		return false, a.fail("read "+what, err)
	}
	return false, nil
}

// isNotFound reports whether err says that a user or role does not exist.
func isNotFound(err error, sentinel error) bool {
	return errors.Is(err, sentinel) || strings.Contains(err.Error(), sentinel.Error())
}

// role creates role unless it exists.
func (a *authStep) role(role string) error {
	if found, err := a.exists("role "+role, rpctypes.ErrRoleNotFound, func(ctx context.Context) error {
		_, err := a.s.client.RoleGet(ctx, role)
		return err
	}); found || err != nil {
		return err
	}
	if _, err := do(a, func(ctx context.Context) (*clientv3.AuthRoleAddResponse, error) { return a.s.client.RoleAdd(ctx, role) }); err != nil {
		return a.fail("create role "+role, err)
	}
	fmt.Fprintf(a.w, "  role %s: created\n", role)
	return nil
}

// grant gives role readwrite on prefix's key range unless it has it, and
// names any other permission the role holds.
func (a *authStep) grant(role, prefix string) error {
	end := keys.PrefixEnd(prefix)
	got, err := do(a, func(ctx context.Context) (*clientv3.AuthRoleGetResponse, error) { return a.s.client.RoleGet(ctx, role) })
	if err != nil {
		return a.fail("read role "+role, err)
	}
	has := false
	var others []string
	for _, p := range got.Perm {
		if string(p.Key) == prefix && string(p.RangeEnd) == end && p.PermType == authpb.READWRITE {
			has = true
			continue
		}
		others = append(others, fmt.Sprintf("%s on [%q, %q)", p.PermType, p.Key, p.RangeEnd))
	}
	if has {
		fmt.Fprintf(a.w, "  role %s: readwrite on prefix %s: already granted\n", role, prefix)
	} else {
		if _, err := do(a, func(ctx context.Context) (*clientv3.AuthRoleGrantPermissionResponse, error) {
			return a.s.client.RoleGrantPermission(ctx, role, prefix, end, clientv3.PermissionType(clientv3.PermReadWrite))
		}); err != nil {
			return a.fail("grant role "+role+" readwrite on "+prefix, err)
		}
		fmt.Fprintf(a.w, "  role %s: readwrite on prefix %s: granted\n", role, prefix)
	}
	if len(others) > 0 {
		fmt.Fprintf(a.w, "  role %s: warning: it also grants %s (not least privilege; revoke with etcdctl role revoke-permission)\n", role, strings.Join(others, ", "))
	}
	return nil
}

// user creates user unless it exists: certificate-only, or with password
// when one is given (root, when auth setup runs as root with a password).
func (a *authStep) user(user, password string) error {
	if found, err := a.exists("user "+user, rpctypes.ErrUserNotFound, func(ctx context.Context) error {
		_, err := a.s.client.UserGet(ctx, user)
		return err
	}); found || err != nil {
		return err
	}
	how := "certificate-only: no password, it authenticates with a client certificate whose CommonName is " + user
	opts := &clientv3.UserAddOptions{NoPassword: password == ""}
	if password != "" {
		how = "with the password auth setup authenticated with"
	}
	if _, err := do(a, func(ctx context.Context) (*clientv3.AuthUserAddResponse, error) {
		return a.s.client.UserAddWithOptions(ctx, user, password, opts)
	}); err != nil {
		return a.fail("create user "+user, err)
	}
	fmt.Fprintf(a.w, "  user %s: created, %s\n", user, how)
	return nil
}

// userRole grants role to user unless it has it, and names the user's
// other roles.
func (a *authStep) userRole(user, role string) error {
	got, err := do(a, func(ctx context.Context) (*clientv3.AuthUserGetResponse, error) { return a.s.client.UserGet(ctx, user) })
	if err != nil {
		return a.fail("read user "+user, err)
	}
	if slices.Contains(got.Roles, role) {
		fmt.Fprintf(a.w, "  user %s: role %s: already granted\n", user, role)
	} else {
		if _, err := do(a, func(ctx context.Context) (*clientv3.AuthUserGrantRoleResponse, error) {
			return a.s.client.UserGrantRole(ctx, user, role)
		}); err != nil {
			return a.fail("grant role "+role+" to user "+user, err)
		}
		fmt.Fprintf(a.w, "  user %s: role %s: granted\n", user, role)
	}
	if others := slices.DeleteFunc(slices.Clone(got.Roles), func(r string) bool { return r == role }); len(others) > 0 && user != rootName {
		fmt.Fprintf(a.w, "  user %s: warning: it also has the role(s) %s (not least privilege)\n", user, strings.Join(others, ", "))
	}
	return nil
}
