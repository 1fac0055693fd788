package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// probeBudget bounds the quick probe of the endpoints.
const probeBudget = 2 * time.Second

// probeOutcome is what the quick probe found at one endpoint.
type probeOutcome int

const (
	// probeInconclusive: the endpoint speaks the expected protocol, or the
	// probe could not tell.
	probeInconclusive probeOutcome = iota
	// probeRefused: nothing listens there.
	probeRefused
	// probeMisconfigured: the TLS setup of the client and the server do not
	// match; the error says how.
	probeMisconfigured
)

// probeResult is the probe of one endpoint.
type probeResult struct {
	outcome probeOutcome
	// err says what is misconfigured.
	err error
}

// prober opens one connection to an endpoint the way the etcd client would
// (TCP, then TLS with the client's configuration) to name a TLS mismatch
// at once: an x509 failure with its reason, a server that wants a client
// certificate, a client certificate it rejects, http:// to a TLS port and
// https:// to a plain one. The etcd client itself only reports that it
// could not connect, after the whole dial timeout.
type prober struct {
	// tls is the client's TLS configuration (nil: none).
	tls *tls.Config
	// caFile, certFile and serverName name the flags' values in messages.
	caFile, certFile, serverName string
}

// probeAll probes every endpoint at once and returns the first
// misconfiguration, or an error when no endpoint accepts a connection, or
// nil.
func (p prober) probeAll(ctx context.Context, endpoints []string) error {
	ctx, cancel := context.WithTimeout(ctx, probeBudget)
	defer cancel()
	results := make([]probeResult, len(endpoints))
	var wg sync.WaitGroup
	for i, ep := range endpoints {
		wg.Go(func() { results[i] = p.probe(ctx, ep) })
	}
	wg.Wait()
	refused := 0
	for _, r := range results {
		switch r.outcome {
		case probeMisconfigured:
			return r.err
		case probeRefused:
			refused++
		}
	}
	if refused == len(endpoints) {
		return &clusterError{kind: errUnreachable, msg: fmt.Sprintf("cannot reach etcd at %s: connection refused (is it running, on these addresses?)",
			strings.Join(endpoints, ","))}
	}
	return nil
}

// probe probes one endpoint.
func (p prober) probe(ctx context.Context, endpoint string) probeResult {
	u, err := url.Parse(endpoint)
	scheme, addr := "", endpoint
	if err == nil && u.Host != "" {
		scheme, addr = u.Scheme, u.Host
	}
	secure := false
	switch scheme {
	case "https":
		secure = true
	case "http":
	case "":
		secure = p.tls != nil
	default:
		return probeResult{} // unix sockets and the like: not probed
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return probeResult{outcome: probeRefused}
		}
		return probeResult{}
	}
	defer func() { _ = conn.Close() }()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	host, _, _ := net.SplitHostPort(addr)
	if !secure {
		return p.probePlain(ctx, endpoint, conn, host)
	}
	return p.probeTLS(ctx, endpoint, conn, host)
}

// probePlain finds out whether a plain endpoint is in fact a TLS port: the
// server answers a TLS hello.
func (p prober) probePlain(ctx context.Context, endpoint string, conn net.Conn, host string) probeResult {
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, ServerName: host, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12}) //nolint:gosec // only asks whether the port speaks TLS
	err := tc.HandshakeContext(ctx)
	if err == nil || isRemoteAlert(err) {
		return probeResult{outcome: probeMisconfigured, err: fmt.Errorf(
			"%s is a TLS port: use https:// (with --cacert, and --cert/--key when the cluster verifies clients)", endpoint)}
	}
	return probeResult{}
}

// h2Hello is an HTTP/2 client preface and an empty SETTINGS frame: what a
// gRPC client sends first, so that the server answers (or, with TLS 1.3,
// judges the client certificate, which it does after the handshake).
const h2Hello = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// probeTLS handshakes as the client would and names what fails.
func (p prober) probeTLS(ctx context.Context, endpoint string, conn net.Conn, host string) probeResult {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if p.tls != nil {
		cfg = p.tls.Clone()
	}
	cfg.NextProtos = []string{"h2"}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			// A TLS server answers a hello, if only with an alert; etcd's
			// plain port hangs up on what it does not recognise.
			return probeResult{outcome: probeMisconfigured, err: fmt.Errorf(
				"%s does not speak TLS (it hung up on a TLS hello): use http://, or the member's TLS port", endpoint)}
		}
		return p.explainTLS(endpoint, cfg.ServerName, err)
	}
	if _, err := tc.Write([]byte(h2Hello)); err != nil {
		return p.explainTLS(endpoint, cfg.ServerName, err)
	}
	var b [1]byte
	if _, err := tc.Read(b[:]); err != nil {
		return p.explainTLS(endpoint, cfg.ServerName, err)
	}
	return probeResult{}
}

// explainTLS names a TLS failure, or calls it inconclusive.
func (p prober) explainTLS(endpoint, name string, err error) probeResult {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
	)
	bad := func(format string, args ...any) probeResult {
		return probeResult{outcome: probeMisconfigured, err: fmt.Errorf(format, args...)}
	}
	switch {
	case errors.As(err, &unknown) && p.caFile != "":
		return bad("%s: the server certificate is not signed by a CA in --cacert %s (%v)", endpoint, p.caFile, unknown)
	case errors.As(err, &unknown):
		return bad("%s: no --cacert given, and the system's roots do not trust the server certificate (%v): give the cluster's CA with --cacert", endpoint, unknown)
	case errors.As(err, &hostname) && p.serverName != "":
		return bad("%s: the server certificate does not carry --server-name %s (%v)", endpoint, p.serverName, hostname)
	case errors.As(err, &hostname):
		return bad("%s: the server certificate is not valid for %s (%v): connect by a name it carries, or give one with --server-name", endpoint, name, hostname)
	case errors.As(err, &invalid):
		return bad("%s: the server certificate is not valid (%v)", endpoint, invalid)
	case errors.As(err, &record):
		return bad("%s does not speak TLS (%v): use http://, or the member's TLS port", endpoint, err)
	case isRemoteAlert(err) && p.certFile == "":
		return bad("%s requires a client certificate (%v): give --cert and --key", endpoint, alertOf(err))
	case isRemoteAlert(err):
		return bad("%s rejected the client certificate --cert %s (%v): it must be signed by a CA the cluster trusts (its --trusted-ca-file)",
			endpoint, p.certFile, alertOf(err))
	}
	return probeResult{}
}

// isRemoteAlert reports whether err is a TLS alert the server sent.
func isRemoteAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// alertOf is the text of a remote alert ("remote error: tls: …").
func alertOf(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	return err
}
