package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/internal/inspect"
	"github.com/zlink-systems/zlink-etcd/internal/scratch"
)

// gcCommand removes the rows of owners whose lease is gone, and abandoned
// scratch prefixes.
func gcCommand() command {
	return command{
		name:    "gc",
		summary: "remove the rows of owners whose lease is gone, and abandoned scratch prefixes (dry run unless --apply)",
		help: `Rows outlive their owner's lease until they are taken over or removed
(decision E-1). gc lists, from the owner index, every owner id that holds
rows but no owner lease, with what it holds, and then runs the store's
garbage collector: the location rows of those owners (descriptors, peers,
spots, actors, routes, with their entry-spot claims), stale owner-index
entries, expired creation terminals and reservation terminals older than
--terminal-age. Authority records never expire and are kept, with their
ledgers, terminals and fences.

It then lists the scratch prefixes that demo, check and bench write under
("<prefix>zlinketcd-<command>-<random>/"), and --prefix itself when it is
one: a prefix is in use while its marker exists (a key on an etcd lease
the running command renews, or, after demo --keep, a lease as long as the
nodes' leases), and abandoned otherwise (its run crashed, was killed or
lost the cluster). Abandoned prefixes are removed whole, owner leases
included.

Without --apply nothing is removed: the summary says what would be.
--terminal-age must be positive (0s would purge every reservation terminal
at once, also those a retry may still need); a negative age keeps them all.`,
		flags: func(fs *flag.FlagSet) runFunc {
			apply := fs.Bool("apply", false, "remove what the dry run reports")
			age := fs.Duration("terminal-age", etcdstore.DefaultReservationTerminalAge, "purge reservation terminals older than this (negative keeps them)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageErrorf("gc takes no arguments, got %q", strings.Join(args, " "))
				}
				if *age == 0 {
					return usageErrorf("--terminal-age 0s would purge every reservation terminal at once, also those a retry may still need: give a positive age, or a negative one to keep them all")
				}
				s, err := e.open(ctx, sessionOptions{write: *apply})
				if err != nil {
					return err
				}
				defer s.close()
				return runGC(ctx, e.stdout, s, etcdstore.GCOptions{DryRun: !*apply, ReservationTerminalAge: *age})
			}
		},
	}
}

// runGC prints the dead owners' holdings, collects, handles the scratch
// prefixes and prints a summary.
func runGC(ctx context.Context, w io.Writer, s *session, opts etcdstore.GCOptions) error {
	mode := "dry run: nothing is removed (--apply removes)"
	if !opts.DryRun {
		mode = "applying"
	}
	fmt.Fprintf(w, "gc: %s under %s on %s\n", mode, s.cfg.Prefix, s.describe)
	fmt.Fprintln(w, "gc: reading the owner index…")
	holdings, err := inspect.NewReader(s.client, s.store).Holdings(ctx)
	if err != nil {
		return err
	}
	var dead []inspect.Holdings
	for _, h := range holdings {
		if !h.Live {
			dead = append(dead, h)
		}
	}
	fmt.Fprintf(w, "gc: %d owner(s) hold rows, %d of them without a lease\n", len(holdings), len(dead))
	if len(dead) > 0 {
		writeHoldings(w, dead)
	}
	fmt.Fprintln(w, "gc: collecting…")
	began := time.Now()
	rep, err := s.store.CollectGarbage(ctx, opts)
	if err != nil {
		return fmt.Errorf("collect garbage: %w", err)
	}
	sc, err := gcScratch(ctx, w, s, opts.DryRun)
	if err != nil {
		return err
	}
	verb := "removed"
	if rep.DryRun {
		verb = "would remove"
	}
	owners := "none"
	if len(rep.DeadOwners) > 0 {
		owners = strings.Join(rep.DeadOwners, ", ")
	}
	fmt.Fprintf(w, "\nSUMMARY (%s, %s)\n", verb, time.Since(began).Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  dead owners\t%d\t%s\n", len(rep.DeadOwners), owners)
	fmt.Fprintf(tw, "  location rows\t%d\n", rep.Rows)
	fmt.Fprintf(tw, "  stale owner-index entries\t%d\n", rep.StaleIndexEntries)
	fmt.Fprintf(tw, "  expired creation terminals\t%d\n", rep.OperationTerminals)
	fmt.Fprintf(tw, "  old reservation terminals\t%d\n", rep.ReservationTerminals)
	fmt.Fprintf(tw, "  abandoned scratch prefixes\t%d\t%d keys\n", sc.prefixes, sc.keys)
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.DryRun && rep.Rows+rep.StaleIndexEntries+rep.OperationTerminals+rep.ReservationTerminals+int64(sc.prefixes) > 0 {
		fmt.Fprintln(w, "gc: dry run; run again with --apply to remove these")
	}
	return nil
}

// scratchSummary counts the abandoned scratch prefixes gc removed (or
// would remove) and their keys.
type scratchSummary struct {
	prefixes int
	keys     int64
}

// gcScratch lists the scratch prefixes below --prefix, and --prefix itself
// when it is one, and removes the abandoned ones unless dry.
func gcScratch(ctx context.Context, w io.Writer, s *session, dry bool) (scratchSummary, error) {
	found, err := scratch.Find(ctx, s.client, s.cfg.Prefix)
	if err != nil {
		return scratchSummary{}, err
	}
	if _, _, ok := scratch.Parse(s.cfg.Prefix); ok {
		self, err := scratch.Examine(ctx, s.client, s.cfg.Prefix)
		if err != nil {
			return scratchSummary{}, err
		}
		found = append([]scratch.Found{self}, found...)
	}
	var sum scratchSummary
	rows := make([][]string, 0, len(found))
	for _, f := range found {
		state := "abandoned"
		if f.InUse {
			state = markerState(f)
		}
		if f.Abandoned() {
			counted, keys := true, f.Keys
			if !dry {
				n, err := scratch.RemoveAbandoned(ctx, s.client, f.Prefix)
				switch {
				case errors.Is(err, scratch.ErrInUse):
					state, counted = "in use again: kept", false
				case err != nil:
					return sum, fmt.Errorf("remove the scratch prefix %s: %w", f.Prefix, err)
				default:
					state, keys = "abandoned: removed", n
				}
			}
			if counted {
				sum.prefixes++
				sum.keys += keys
			}
		}
		rows = append(rows, []string{f.Prefix, f.Purpose, strconv.FormatInt(f.Keys, 10), state})
	}
	fmt.Fprintf(w, "gc: %d scratch prefix(es) at or under %s, %d abandoned\n", len(found), s.cfg.Prefix, countAbandoned(found))
	if len(rows) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  PREFIX\tCOMMAND\tKEYS\tSTATE")
		for _, r := range rows {
			fmt.Fprintln(tw, "  "+strings.Join(r, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// countAbandoned counts the abandoned prefixes.
func countAbandoned(found []scratch.Found) int {
	n := 0
	for _, f := range found {
		if f.Abandoned() {
			n++
		}
	}
	return n
}

// markerState describes a prefix in use.
func markerState(f scratch.Found) string {
	m := f.Marker
	what := "in use"
	if m.Kept {
		what = "kept"
	}
	if m.Command != "" {
		what += " by " + m.Command
	}
	if m.Holder != "" {
		what += " (" + m.Holder + ")"
	}
	if !m.StartedAt.IsZero() {
		what += " since " + m.StartedAt.Format(time.RFC3339)
	}
	return fmt.Sprintf("%s; marker lease %ds left", what, f.MarkerTTL)
}

// writeHoldings prints one line per dead owner with its entries per table.
func writeHoldings(w io.Writer, dead []inspect.Holdings) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  OWNER\tENTRIES\tBY TABLE")
	for _, h := range dead {
		var parts []string
		for _, t := range slices.Sorted(maps.Keys(h.Tables)) {
			note := ""
			if t == "authority" {
				note = " (kept)"
			}
			parts = append(parts, fmt.Sprintf("%s %d%s", t, h.Tables[t], note))
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", h.OwnerID, h.Total, strings.Join(parts, ", "))
	}
	_ = tw.Flush()
}
