package main

import (
	"context"
	"flag"

	"github.com/zlink-systems/zlink-etcd/internal/inspect"
)

// inspectCommand prints what the store keeps under the prefix.
func inspectCommand() command {
	return command{
		name:    "inspect",
		summary: "print the mesh nodes, descriptors, rows, owner leases and authorities under the prefix",
		usage:   " [section...]",
		help: `Reads everything the store keeps under --prefix at one etcd revision and
prints one table per section: mesh-nodes, client-servers, fanout-publishers,
peers, spots, actors, routes, leases (owner leases with the time their etcd
lease has left), authorities and other (key counts of the bookkeeping
tables). Name sections to print only those. LIVE says whether the row's
owner id holds an owner lease.

--consistency s reads serializably, as etcdctl get --consistency=s does:
every read is served by the member the client talks to from its own copy,
without the leader, so inspect works while the cluster has no quorum (the
data may be stale, and the time owner leases have left is not shown).`,
		flags: func(fs *flag.FlagSet) runFunc {
			output := fs.String("output", "table", "output format: table or json")
			consistency := fs.String("consistency", "l", "read consistency: l (linearizable) or s (serializable, from one member, without the leader)")
			return func(ctx context.Context, e *env, args []string) error {
				sections, err := inspect.ParseSections(args)
				if err != nil {
					return usageErrorf("%s", err.Error())
				}
				if *output != "table" && *output != "json" {
					return usageErrorf("--output %q must be table or json", *output)
				}
				serializable, err := parseConsistency(*consistency)
				if err != nil {
					return err
				}
				s, err := e.open(ctx, sessionOptions{serializable: serializable})
				if err != nil {
					return err
				}
				defer s.close()
				var opts []inspect.ReaderOption
				if serializable {
					opts = append(opts, inspect.Serializable())
				}
				snap, err := inspect.NewReader(s.client, s.store, opts...).Read(ctx, sections...)
				if err != nil {
					return err
				}
				if *output == "json" {
					return inspect.WriteJSON(e.stdout, snap)
				}
				return inspect.WriteTables(e.stdout, snap)
			}
		},
	}
}

// parseConsistency parses a --consistency value (etcdctl's l and s, or
// the words): it reports whether reads are serializable.
func parseConsistency(s string) (bool, error) {
	switch s {
	case "l", "linearizable":
		return false, nil
	case "s", "serializable":
		return true, nil
	}
	return false, usageErrorf("--consistency %q must be l (linearizable) or s (serializable)", s)
}
