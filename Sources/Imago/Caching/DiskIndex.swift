// Built with the `DiskCache` trait (on by default): GRDB and SQLite.
#if DiskCache

    import Foundation
    import GRDB

    /// The disk cache's SQLite index: one row per entry. A `DatabasePool` in WAL mode, so lookups run
    /// on reader connections while the writer commits.
    struct DiskIndex: Sendable {
        enum Change: Sendable {
            case upsert(Row)
            case refresh(key: String, metadata: CacheMetadata)
            case remove(key: String)
        }

        private let pool: DatabasePool

        init(path: String) throws {
            var configuration = Configuration()
            // Another process may hold the write lock for a batch; wait for it rather than fail.
            configuration.busyMode = .timeout(10)
            configuration.prepareDatabase { db in
                // WAL with NORMAL is crash safe; payload checksums catch the rest.
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
            pool = try DatabasePool(path: path, configuration: configuration)
            var migrator = DatabaseMigrator()
            migrator.registerMigration("v1") { db in
                try db.execute(
                    sql: """
                        CREATE TABLE entry (
                            key TEXT PRIMARY KEY NOT NULL,
                            file TEXT NOT NULL,
                            size INTEGER NOT NULL,
                            checksum INTEGER NOT NULL,
                            created REAL NOT NULL,
                            accessed REAL NOT NULL,
                            contentType TEXT,
                            receivedAt REAL NOT NULL,
                            lifetime REAL NOT NULL,
                            initialAge REAL NOT NULL,
                            flags INTEGER NOT NULL,
                            etag TEXT,
                            lastModified TEXT
                        ) WITHOUT ROWID;
                        CREATE INDEX entry_accessed ON entry(accessed);
                        CREATE INDEX entry_created ON entry(created);
                        """)
            }
            migrator.registerMigration("v2: XXH3 checksums") { db in
                // Rows checksummed with v1's XXH64 would read as damaged; drop them (the orphan sweep
                // removes their files).
                try db.execute(sql: "DELETE FROM entry")
            }
            migrator.registerMigration("v3: placeholders") { db in
                // A ThumbHash per entry, read without the payload; an upsert (new bytes) resets it.
                try db.execute(sql: "ALTER TABLE entry ADD COLUMN placeholder BLOB")
            }
            try migrator.migrate(pool)
        }

        func count() throws -> Int {
            try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM entry") ?? 0 }
        }

        func totalSize() throws -> Int {
            try pool.read { db in try Int.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM entry") ?? 0 }
        }

        func allFiles() throws -> Set<String> {
            try pool.read { db in Set(try String.fetchAll(db, sql: "SELECT file FROM entry")) }
        }

        /// Applies a batch in one transaction; returns the files of replaced and removed rows.
        func apply(_ changes: [Change], accessed: Double) throws -> [String] {
            try pool.write { db in
                var released: [String] = []
                let fileOf = try db.cachedStatement(sql: "SELECT file FROM entry WHERE key = ?")
                for change in changes {
                    switch change {
                    case .upsert(let row):
                        if let old = try String.fetchOne(fileOf, arguments: [row.key]) { released.append(old) }
                        try db.cachedStatement(sql: Row.upsertSQL).execute(arguments: row.upsertArguments(accessed: accessed))
                    case .refresh(let key, let metadata):
                        try db.cachedStatement(sql: Row.refreshSQL).execute(arguments: Row.refreshArguments(metadata, key: key, accessed: accessed))
                    case .remove(let key):
                        if let old = try String.fetchOne(fileOf, arguments: [key]) { released.append(old) }
                        try db.cachedStatement(sql: "DELETE FROM entry WHERE key = ?").execute(arguments: [key])
                    }
                }
                return released
            }
        }

        /// The placeholder recorded for `key`, nil when none or longer than `limit` bytes.
        func placeholder(for key: String, limit: Int) throws -> Data? {
            try pool.read { db in
                try Data.fetchOne(
                    db, sql: "SELECT placeholder FROM entry WHERE key = ? AND length(placeholder) <= ?", arguments: [key, limit])
            }
        }

        /// Records placeholders for the rows that exist.
        func setPlaceholders(_ placeholders: [String: Data]) throws {
            try pool.write { db in
                let statement = try db.cachedStatement(sql: "UPDATE entry SET placeholder = ? WHERE key = ?")
                for (key, data) in placeholders { try statement.execute(arguments: [data, key]) }
            }
        }

        func touch(_ touches: [String: Double]) throws {
            try pool.write { db in
                let statement = try db.cachedStatement(sql: "UPDATE entry SET accessed = max(accessed, ?) WHERE key = ?")
                for (key, time) in touches { try statement.execute(arguments: [time, key]) }
            }
        }

        /// Deletes rows created before `cutoff`; returns their files.
        func removeCreated(before cutoff: Double) throws -> [String] {
            try pool.write { db in
                let files = try String.fetchAll(db, sql: "SELECT file FROM entry WHERE created < ?", arguments: [cutoff])
                if !files.isEmpty { try db.execute(sql: "DELETE FROM entry WHERE created < ?", arguments: [cutoff]) }
                return files
            }
        }

        /// When the payloads total more than `limit`, deletes rows least recently accessed first until
        /// they total at most `target`; returns their files.
        func evict(above limit: Int, downTo target: Int) throws -> [String] {
            try pool.write { db in
                var total = try Int.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM entry") ?? 0
                guard total > limit else { return [] }
                var victims: [(key: String, file: String)] = []
                let rows = try GRDB.Row.fetchCursor(db, sql: "SELECT key, file, size FROM entry ORDER BY accessed")
                while total > target, let row = try rows.next() {
                    victims.append((row[0], row[1]))
                    total -= row[2] as Int
                }
                let delete = try db.cachedStatement(sql: "DELETE FROM entry WHERE key = ?")
                for victim in victims { try delete.execute(arguments: [victim.key]) }
                return victims.map(\.file)
            }
        }

        /// Deletes the rows among `known` whose files are not in `present`.
        func removeRows(whereFileNotIn present: Set<String>, among known: Set<String>) throws {
            let missing = known.subtracting(present)
            guard !missing.isEmpty else { return }
            try pool.write { db in
                let delete = try db.cachedStatement(sql: "DELETE FROM entry WHERE file = ?")
                for file in missing { try delete.execute(arguments: [file]) }
            }
        }

        func removeAll() throws {
            try pool.write { db in try db.execute(sql: "DELETE FROM entry") }
        }
    }

    extension Duration {
        /// The duration in seconds, fractions included.
        var seconds: Double {
            Double(components.seconds) + Double(components.attoseconds) / 1e18
        }
    }

#endif
