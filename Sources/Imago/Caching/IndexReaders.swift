// Built with the `DiskCache` trait (on by default): GRDB and SQLite.
#if DiskCache

    import Foundation
    import GRDBSQLite

    /// The disk cache's hot path: looking up one row by key on plain SQLite connections with a
    /// prepared statement, one connection per concurrent reader. GRDB's pool does the same work with
    /// several times the overhead per call (queue hops, a row object, key paths), which at 50 KB per
    /// entry was most of a cache read; writes and maintenance stay on GRDB.
    final class IndexReaders: Sendable {
        /// One connection and its prepared lookup, used by one thread at a time.
        private final class Connection: @unchecked Sendable {
            let database: OpaquePointer
            let lookup: OpaquePointer

            init(path: String) throws {
                var database: OpaquePointer?
                let opened = sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
                guard opened == SQLITE_OK, let database else {
                    if let database { sqlite3_close(database) }
                    throw IndexReaders.error(opened, "open")
                }
                sqlite3_busy_timeout(database, 10_000)
                sqlite3_exec(database, "PRAGMA query_only = 1", nil, nil, nil)
                var lookup: OpaquePointer?
                let prepared = sqlite3_prepare_v3(
                    database, "SELECT \(DiskIndex.Row.selectList) FROM entry WHERE key = ?", -1, UInt32(SQLITE_PREPARE_PERSISTENT), &lookup, nil)
                guard prepared == SQLITE_OK, let lookup else {
                    sqlite3_close(database)
                    throw IndexReaders.error(prepared, "prepare")
                }
                self.database = database
                self.lookup = lookup
            }

            deinit {
                sqlite3_finalize(lookup)
                sqlite3_close(database)
            }
        }

        private let path: String
        private let idle = Locked<[Connection]>([])

        init(path: String) {
            self.path = path
        }

        /// The row for `key`, or nil.
        func row(for key: String) throws -> DiskIndex.Row? {
            let connection = try idle.withLock { $0.popLast() } ?? Connection(path: path)
            defer { idle.withLock { $0.append(connection) } }
            let statement = connection.lookup
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            let result = key.withCString { text in
                // SQLITE_STATIC (nil): the text outlives the step, which happens inside this closure.
                sqlite3_bind_text(statement, 1, text, -1, nil)
                return sqlite3_step(statement)
            }
            switch result {
            case SQLITE_ROW: return DiskIndex.Row(statement: statement, key: key)
            case SQLITE_DONE: return nil
            default: throw Self.error(result, "step")
            }
        }

        private static func error(_ code: Int32, _ what: String) -> any Error {
            NSError(domain: "SQLite", code: Int(code), userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: sqlite3_errstr(code)))"])
        }
    }

#endif
