// Package recovery measures what a fault costs a deployment: how long it was
// down for the clients and what it lost.
//
// A Tracker follows the workload's transactions (driver.Config.OnTransaction)
// around each fault: how soon the first transaction failed, the longest time
// without any commit and each client's, when the throughput was back to 90% of
// what it was before, and the errors meanwhile by SQLSTATE, with the
// transactions lost with their connection, whose outcome the clients cannot
// know.
//
// A Ledger runs beside the workload, whatever it is, on a session of its own:
// it commits numbered rows at a steady rate and remembers which the server
// acknowledged. After the run, Reckon reads the rows on the primary: an
// acknowledged row that is missing is a lost commit, a present row whose commit
// was in flight is one nobody was told of. The recovery point (Reckoning.RPO)
// is the window of acknowledged work lost: from the earliest lost commit's
// acknowledgement to the failure, never less than the interval between the
// ledger's commits.
package recovery
