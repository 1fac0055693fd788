// Package txn turns one store decision into one guarded etcd transaction.
//
// A decision (a function of a View) reads keys through the View and returns
// its result together with a Commit: the writes it wants. The Engine
//
//  1. builds the View from one read at a single revision (or from its cache of
//     recently observed keys, when every key the operation needs is there);
//  2. runs the decision; a key the decision asks for that the View does not
//     hold is recorded as a miss and answered "absent", and after the
//     decision returns the Engine fetches the misses (at the View's revision)
//     and runs the decision again;
//  3. commits the Commit with one Txn whose If re-asserts every observation
//     the decision made (ModRevision or absence of each key read, the
//     CreateRevision of each owner key consulted) and whose Else returns the
//     current value of each of those keys, so that a retry needs no extra
//     read;
//  4. retries a bounded number of times, then gives up with ErrContention.
//
// Decisions must be pure functions of the View: they may run several times.
// Every value a Commit writes carries the attempt's random nonce
// (View.Nonce); when a Txn's outcome is unknown (deadline, lost connection)
// the Engine re-reads and looks for that nonce instead of guessing (decision
// E-9). Commits that do not fit etcd's limits are refused before anything is
// sent, with an error wrapping location.ErrTooLarge (decision E-8).
package txn
