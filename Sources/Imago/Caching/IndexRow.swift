// Built with the `DiskCache` trait (on by default): GRDB and SQLite.
#if DiskCache

    import Foundation
    import GRDB
    import GRDBSQLite

    extension DiskIndex {
        /// One entry of the index, and the one place that knows how a row is laid out in SQLite: its
        /// columns, the flag bits, and the statements that write it. ``DiskIndex`` writes rows with
        /// GRDB through ``upsertSQL`` and ``refreshSQL``; ``IndexReaders`` reads them with plain SQLite
        /// through ``init(statement:key:)``.
        struct Row: Sendable {
            var key: String
            var file: String
            var size: Int
            var checksum: UInt64
            var created: Double
            /// Last access as recorded (to the minute: see ``DiskCache``); 0 where not read.
            var accessed: Double = 0
            var metadata: CacheMetadata

            /// The columns, in the order ``selectList`` names them.
            enum Column: Int32, CaseIterable {
                case key, file, size, checksum, created, accessed, contentType, receivedAt, lifetime, initialAge, flags, etag, lastModified
            }

            /// Bits of the `flags` column.
            struct Flags: OptionSet {
                let rawValue: Int64
                static let immutable = Flags(rawValue: 1)
                static let requiresRevalidation = Flags(rawValue: 2)

                init(rawValue: Int64) { self.rawValue = rawValue }

                init(_ freshness: HTTPFreshness) {
                    self = []
                    if freshness.isImmutable { insert(.immutable) }
                    if freshness.requiresRevalidation { insert(.requiresRevalidation) }
                }
            }

            /// Every column, for `SELECT`.
            static let selectList = Column.allCases.map { "\($0)" }.joined(separator: ", ")

            /// Inserts or replaces a whole row; arguments are ``upsertArguments(accessed:)``.
            static let upsertSQL = "INSERT OR REPLACE INTO entry (\(selectList)) VALUES (\(Column.allCases.map { _ in "?" }.joined(separator: ", ")))"

            /// Updates an entry's metadata, keeping its bytes; arguments are ``refreshArguments(_:key:accessed:)``.
            static let refreshSQL = """
                UPDATE entry SET contentType = coalesce(?, contentType), receivedAt = ?, lifetime = ?, initialAge = ?, flags = ?,
                    etag = ?, lastModified = ?, accessed = ? WHERE key = ?
                """

            /// Arguments for ``upsertSQL``, in ``Column`` order.
            func upsertArguments(accessed: Double) -> StatementArguments {
                let freshness = metadata.freshness
                return [
                    key, file, size, Int64(bitPattern: checksum), created, accessed,
                    metadata.contentType, metadata.receivedAt.timeIntervalSince1970,
                    freshness.lifetime.seconds, freshness.initialAge.seconds, Flags(freshness).rawValue,
                    freshness.etag, freshness.lastModified,
                ]
            }

            /// Arguments for ``refreshSQL``.
            static func refreshArguments(_ metadata: CacheMetadata, key: String, accessed: Double) -> StatementArguments {
                let freshness = metadata.freshness
                return [
                    metadata.contentType, metadata.receivedAt.timeIntervalSince1970, freshness.lifetime.seconds,
                    freshness.initialAge.seconds, Flags(freshness).rawValue, freshness.etag, freshness.lastModified,
                    accessed, key,
                ]
            }
        }
    }

    extension DiskIndex.Row {
        /// The row a plain SQLite statement selecting ``selectList`` is on.
        init(statement: OpaquePointer, key: String) {
            func text(_ column: Column) -> String? {
                sqlite3_column_text(statement, column.rawValue).map { String(cString: $0) }
            }
            func integer(_ column: Column) -> Int64 { sqlite3_column_int64(statement, column.rawValue) }
            func real(_ column: Column) -> Double { sqlite3_column_double(statement, column.rawValue) }
            let flags = Flags(rawValue: integer(.flags))
            self.init(
                key: key,
                file: text(.file) ?? "",
                size: Int(integer(.size)),
                checksum: UInt64(bitPattern: integer(.checksum)),
                created: real(.created),
                accessed: real(.accessed),
                metadata: CacheMetadata(
                    contentType: text(.contentType),
                    receivedAt: Date(timeIntervalSince1970: real(.receivedAt)),
                    freshness: HTTPFreshness(
                        isStorable: true,
                        lifetime: .seconds(real(.lifetime)),
                        initialAge: .seconds(real(.initialAge)),
                        isImmutable: flags.contains(.immutable),
                        requiresRevalidation: flags.contains(.requiresRevalidation),
                        etag: text(.etag),
                        lastModified: text(.lastModified)
                    )
                )
            )
        }
    }

#endif
