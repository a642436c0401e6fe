import SQLKit

/// The SQL text and binds of the plain statements a change runs most (an INSERT of rows of values
/// into a table; a SELECT from one table with a WHERE of comparisons, an ORDER BY and a LIMIT),
/// written in one pass, in SQLite's dialect, exactly as SQLKit writes them.
///
/// SQLKit serializes a query by building a statement of parts, each written into a serializer of
/// its own whose binds are copied in and out, and asking the dialect for each quote and
/// placeholder through existentials: on the SQLite writer, the store's one serial resource, that
/// was about a sixth of a durable change's time (`perf`: 9.7 % of the process under 16 clients,
/// beside SQLite's own 26.5 %). Any other statement, or a part this does not know, is nil here
/// and left to SQLKit. Debug builds check every statement written here against SQLKit's text
/// (`SQLiteThreadDatabase.serialized`), so the test suites hold the two to the same output.
enum SQLiteStatementText {
    /// `query`'s SQL and binds, or nil when it is not one of the plain shapes.
    static func of(_ query: any SQLExpression) -> (sql: String, binds: [any Encodable & Sendable])? {
        var writer = Writer()
        if let insert = query as? SQLInsert {
            guard writer.insert(insert) else { return nil }
        } else if let select = query as? SQLSelect {
            guard writer.select(select) else { return nil }
        } else {
            return nil
        }
        return (writer.sql, writer.binds)
    }

    private struct Writer {
        var sql = ""
        var binds: [any Encodable & Sendable] = []

        init() { sql.reserveCapacity(256) }

        /// `INSERT INTO t (a, b) VALUES (?1, ?2), …`: no CTE, conflict clause, subquery or RETURNING.
        mutating func insert(_ insert: SQLInsert) -> Bool {
            guard insert.tableExpressionGroup == nil, insert.genericConflictStrategy == nil, insert.valueQuery == nil,
                  insert.returning == nil, !insert.columns.isEmpty, !insert.values.isEmpty else { return false }
            sql += "INSERT INTO "
            guard expression(insert.table) else { return false }
            sql += " ("
            guard list(insert.columns) else { return false }
            sql += ") VALUES "
            // Index loops, not `enumerated()`: its generic type's metadata was looked up each time.
            for index in insert.values.indices {
                sql += index == 0 ? "(" : ", ("
                guard list(insert.values[index]) else { return false }
                sql += ")"
            }
            return true
        }

        /// `SELECT columns FROM t WHERE … ORDER BY … LIMIT n OFFSET m`: one table, no CTE,
        /// DISTINCT, join, grouping or locking.
        mutating func select(_ select: SQLSelect) -> Bool {
            guard select.tableExpressionGroup == nil, !select.isDistinct, select.joins.isEmpty, select.groupBy.isEmpty,
                  select.having == nil, select.lockingClause == nil, !select.columns.isEmpty, select.tables.count == 1 else { return false }
            sql += "SELECT "
            guard list(select.columns) else { return false }
            sql += " FROM "
            guard expression(select.tables[0]) else { return false }
            if let predicate = select.predicate {
                sql += " WHERE "
                guard expression(predicate) else { return false }
            }
            if !select.orderBy.isEmpty {
                sql += " ORDER BY "
                guard list(select.orderBy) else { return false }
            }
            if let limit = select.limit { sql += " LIMIT \(limit)" }
            if let offset = select.offset { sql += " OFFSET \(offset)" }
            return true
        }

        /// `expressions` separated by ", " (SQLKit's `SQLList`).
        mutating func list(_ expressions: [any SQLExpression]) -> Bool {
            for index in expressions.indices {
                if index > 0 { sql += ", " }
                guard expression(expressions[index]) else { return false }
            }
            return true
        }

        mutating func expression(_ part: any SQLExpression) -> Bool {
            switch part {
            case let bind as SQLBind:
                binds.append(bind.encodable)
                sql += "?"
                sql += String(binds.count)
            case let identifier as SQLIdentifier:
                // A name with a double quote of its own is left to the dialect's quote.
                guard !identifier.string.utf8.contains(UInt8(ascii: "\"")) else { return false }
                sql += "\""
                sql += identifier.string
                sql += "\""
            case let column as SQLColumn:
                if let table = column.table {
                    guard expression(table) else { return false }
                    sql += "."
                }
                return expression(column.name)
            case let literal as SQLLiteral:
                switch literal {
                case .all: sql += "*"
                case .null: sql += "NULL"
                case .numeric(let number): sql += number
                case .default, .boolean, .string: return false
                }
            case let binary as SQLBinaryExpression:
                guard let op = binary.op as? SQLBinaryOperator, let text = Self.text(of: op) else { return false }
                guard expression(binary.left) else { return false }
                sql += " "
                sql += text
                sql += " "
                return expression(binary.right)
            case let order as SQLOrderBy:
                guard let direction = order.direction as? SQLDirection, expression(order.expression) else { return false }
                switch direction {
                case .ascending: sql += " ASC"
                case .descending: sql += " DESC"
                case .null, .notNull: return false
                }
            default:
                return false
            }
            return true
        }

        /// The comparisons and connectives a WHERE of the plain shapes uses.
        static func text(of op: SQLBinaryOperator) -> String? {
            switch op {
            case .equal: "="
            case .notEqual: "<>"
            case .greaterThan: ">"
            case .greaterThanOrEqual: ">="
            case .lessThan: "<"
            case .lessThanOrEqual: "<="
            case .and: "AND"
            case .or: "OR"
            case .is: "IS"
            case .isNot: "IS NOT"
            default: nil
            }
        }
    }
}
