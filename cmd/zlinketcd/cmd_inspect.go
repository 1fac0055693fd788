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
owner id holds an owner lease.`,
		flags: func(fs *flag.FlagSet) runFunc {
			output := fs.String("output", "table", "output format: table or json")
			return func(ctx context.Context, e *env, args []string) error {
				sections, err := inspect.ParseSections(args)
				if err != nil {
					return usageErrorf("%s", err.Error())
				}
				if *output != "table" && *output != "json" {
					return usageErrorf("--output %q must be table or json", *output)
				}
				s, err := open(ctx, e.conn, e.stderr, e.log)
				if err != nil {
					return err
				}
				defer s.close()
				snap, err := inspect.NewReader(s.client, s.store).Read(ctx, sections...)
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
