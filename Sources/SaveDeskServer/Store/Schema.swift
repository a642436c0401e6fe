import RetentionDomain

/// Versioned migrations of the store, applied in order at start. The same tables on SQLite and
/// PostgreSQL: TEXT keys, BIGINT Unix seconds, JSON as TEXT; flags are INTEGER 0/1 on SQLite and
/// BOOLEAN on PostgreSQL (the services bind and read Swift `Bool`s, which each engine maps).
/// Where the engines differ beyond that (search indexes), a migration has one text per engine.
enum Schema {
    static func migrations(for kind: Store.Kind) -> [(version: Int, statements: [String])] {
        let flag = kind == .sqlite ? "INTEGER" : "BOOLEAN", no = kind == .sqlite ? "0" : "FALSE"
        return shared(flag: flag, no: no) + [
            (5, kind == .sqlite ? sqliteSearch : postgresSearch), (6, rollups(flag: flag)), (7, unrolled(flag: flag)),
            (8, modes(flag: flag, no: no)), (9, kinds), (10, identities(flag: flag)), (11, events(kind: kind, flag: flag)),
            (12, retentionRequests(flag: flag)), (13, finerRollups(.hour, flag: flag)), (14, stripe(flag: flag)),
            (15, kind == .sqlite ? sqliteSortedPrefixes : []), (16, kind == .sqlite ? [] : postgresEventsAtCommit),
            (17, finerRollups(.fiveMinutes, flag: flag)),
            // The funnel's free-text samples (each question's newest): an index of the answers
            // with text only, so a question nobody wrote in is an empty range, not a scan of all
            // its answers for none.
            (18, ["CREATE INDEX cancel_flow_answers_text ON cancel_flow_answers (livemode, question_id, created_at) WHERE has_text"]),
            // PostgreSQL: an answer's reference to its response is not checked by the database.
            // The check read the response's index page, and under SERIALIZABLE that read made a
            // response written beside it into another page's reader: responses lost races to each
            // other (some 40 a bench run of 16 clients). An answer is only ever written in the one
            // statement that writes its response (`SQLCancelFlowResponseRepository.inserts`), and
            // responses are never deleted.
            (19, kind == .sqlite ? [] : ["ALTER TABLE cancel_flow_answers DROP CONSTRAINT IF EXISTS cancel_flow_answers_response_id_fkey"]),
        ]
    }

    /// Stripe as the web billing provider: a web subscription's Stripe id and the time of the
    /// newest Stripe state applied to it (an older event never overwrites it); each webhook event
    /// once, by its id; and each action sent to Stripe until its outcome is recorded here (the
    /// reconcile job finishes those a failure left halfway).
    private static func stripe(flag: String) -> [String] {
        [
            "ALTER TABLE subscriptions ADD COLUMN provider_id TEXT",
            "ALTER TABLE subscriptions ADD COLUMN provider_synced_at BIGINT",
            "CREATE UNIQUE INDEX subscriptions_provider ON subscriptions (provider_id)",
            """
            CREATE TABLE stripe_events (
                id TEXT PRIMARY KEY, livemode \(flag) NOT NULL, type TEXT NOT NULL, created BIGINT NOT NULL,
                object_id TEXT, received_at BIGINT NOT NULL, outcome TEXT NOT NULL)
            """,
            "CREATE INDEX stripe_events_received ON stripe_events (received_at)",
            """
            CREATE TABLE stripe_actions (
                idempotency_key TEXT PRIMARY KEY, livemode \(flag) NOT NULL, customer_id TEXT NOT NULL,
                subscription_id TEXT, operation TEXT NOT NULL, started_at BIGINT NOT NULL, finished_at BIGINT, outcome TEXT)
            """,
            "CREATE INDEX stripe_actions_open ON stripe_actions (finished_at, started_at)",
        ]
    }

    /// The funnel's rollups finer than a day (hourly, migration 13; five-minute, 17): a range's
    /// partial days read whole hours, its partial hours whole five minutes, and rows only for the
    /// partial five minutes at its ends. Filled from the responses already stored.
    /// The responses still listed for the next fold are left to it (counted now, the fold would
    /// count them again).
    private static func finerRollups(_ grain: CancelFlowRollups.Grain, flag: String) -> [String] {
        let folded = "NOT IN (SELECT response_id FROM cancel_flow_unrolled)"
        return rollupTables(grain, flag: flag) + addToRollups(
            grain, responses: "(SELECT * FROM cancel_flow_responses WHERE id \(folded)) AS folded",
            answers: "(SELECT * FROM cancel_flow_answers WHERE response_id \(folded)) AS folded", upsert: false
        )
    }

    /// Apple's cancel page: each real-time retention request once (by Apple's request
    /// identifier), with the answer given (a repeat gets it again), the rule and message chosen,
    /// the latency, and when the offer shown was redeemed. Earlier cancel flows are read per
    /// customer when Apple asks.
    private static func retentionRequests(flag: String) -> [String] {
        [
            """
            CREATE TABLE retention_requests (
                request_identifier TEXT PRIMARY KEY, livemode \(flag) NOT NULL, original_transaction_id TEXT NOT NULL,
                customer_id TEXT, app_store_product_id TEXT NOT NULL, user_locale TEXT NOT NULL, signed_at BIGINT NOT NULL,
                received_at BIGINT NOT NULL, choice TEXT NOT NULL, rule TEXT, message_key TEXT, offer_identifier TEXT,
                alternate_product_id TEXT, latency_micros BIGINT NOT NULL, answer TEXT, redeemed_at BIGINT)
            """,
            "CREATE INDEX retention_requests_received ON retention_requests (livemode, received_at)",
            "CREATE INDEX retention_requests_transaction ON retention_requests (original_transaction_id, received_at)",
            "CREATE INDEX cancel_flow_responses_customer ON cancel_flow_responses (customer_id, created_at)",
        ]
    }

    /// The event log the desk's stream reads: one row per audited change, numbered in commit order
    /// (SQLite has one writer; on PostgreSQL see `postgresEventsAtCommit`), and the horizon: the
    /// largest number the purge removed (a resume from before it has missed events).
    private static func events(kind: Store.Kind, flag: String) -> [String] {
        let id = kind == .sqlite ? "INTEGER PRIMARY KEY AUTOINCREMENT" : "BIGSERIAL PRIMARY KEY"
        return [
            """
            CREATE TABLE desk_events (
                id \(id), livemode \(flag) NOT NULL, customer_id TEXT NOT NULL, type TEXT NOT NULL,
                actor TEXT NOT NULL, at BIGINT NOT NULL, audit_id TEXT NOT NULL, request_id TEXT NOT NULL,
                recorded_at BIGINT NOT NULL)
            """,
            "CREATE INDEX desk_events_customer ON desk_events (customer_id, id)",
            "CREATE INDEX desk_events_recorded ON desk_events (recorded_at)",
            "CREATE TABLE desk_event_horizon (one INTEGER PRIMARY KEY, purged_through BIGINT NOT NULL)",
            "INSERT INTO desk_event_horizon (one, purged_through) VALUES (1, 0)",
        ]
    }

    /// PostgreSQL: an audit row's event is written and numbered at its transaction's commit, by a
    /// deferred constraint trigger, after it takes `SQLEventLogRepository.orderLock`. The lock is
    /// held from there to the end of the commit, so a smaller number never becomes visible after a
    /// larger one; taken any earlier (it was taken at the audit row's insert until migration 16),
    /// writes of different customers queued for the transaction's last round trips as well.
    private static let postgresEventsAtCommit: [String] = [
        """
        CREATE FUNCTION desk_events_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock(\(SQLEventLogRepository.orderLock));
            INSERT INTO desk_events (livemode, customer_id, type, actor, at, audit_id, request_id, recorded_at)
            SELECT c.livemode, NEW.customer_id, NEW.action, NEW.actor, NEW.at, NEW.id, NEW.request_id,
                CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS BIGINT)
            FROM customers c WHERE c.id = NEW.customer_id;
            RETURN NULL;
        END $$
        """,
        """
        CREATE CONSTRAINT TRIGGER \(SQLEventLogRepository.atCommit) AFTER INSERT ON audit_events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION desk_events_at_commit()
        """,
    ]

    /// A real app's users: who created a customer (the key's digest, for its daily cap), the
    /// App Store `appAccountToken` that links signed data to a customer, a payment provider's id,
    /// App Store original transactions an operator imported for a customer, and the signed payload
    /// of a notification no customer could take yet (kept, to apply once one syncs or claims it).
    private static func identities(flag: String) -> [String] {
        [
            "ALTER TABLE customers ADD COLUMN created_by TEXT",
            "ALTER TABLE customers ADD COLUMN app_account_token TEXT",
            "ALTER TABLE customers ADD COLUMN billing_customer_id TEXT",
            "CREATE INDEX customers_created_by ON customers (created_by, created_at)",
            "CREATE UNIQUE INDEX customers_app_account_token ON customers (livemode, app_account_token)",
            """
            CREATE TABLE app_store_links (
                original_transaction_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers (id),
                livemode \(flag) NOT NULL)
            """,
            "CREATE INDEX app_store_links_customer ON app_store_links (customer_id)",
            "ALTER TABLE appstore_notifications ADD COLUMN signed_payload TEXT",
            "CREATE INDEX appstore_notifications_waiting ON appstore_notifications (original_transaction_id, outcome)",
        ]
    }

    /// What kind of customer a row is, and where it lists: the demo's walk-through stories first
    /// (each with its one line to try), then everyone else, then the generated demo history.
    private static let kinds: [String] = [
        "ALTER TABLE customers ADD COLUMN kind TEXT NOT NULL DEFAULT 'customer'",
        "ALTER TABLE customers ADD COLUMN story TEXT",
        "ALTER TABLE customers ADD COLUMN list_rank INTEGER NOT NULL DEFAULT 1",
        "UPDATE customers SET kind = 'generated', list_rank = 2 WHERE id LIKE 'cus\\_hist\\_%' ESCAPE '\\'",
        "CREATE INDEX customers_ranked_listing ON customers (livemode, list_rank, name, id)",
        "CREATE INDEX customers_kind ON customers (livemode, kind)",
    ]

    /// Every row a background job removes says its mode, so a job of one mode never touches the
    /// other's: idempotency records (older ones are taken as test data: their key's mode was not
    /// kept; they only ever live 24 hours) and portal sessions (their customer's mode).
    private static func modes(flag: String, no: String) -> [String] {
        [
            "ALTER TABLE idempotency_records ADD COLUMN livemode \(flag) NOT NULL DEFAULT \(no)",
            "ALTER TABLE portal_sessions ADD COLUMN livemode \(flag) NOT NULL DEFAULT \(no)",
            "UPDATE portal_sessions SET livemode = (SELECT livemode FROM customers WHERE customers.id = portal_sessions.customer_id)",
            "CREATE INDEX idempotency_records_mode ON idempotency_records (livemode, created_at)",
            "CREATE INDEX portal_sessions_mode ON portal_sessions (livemode, expires_at)",
            "CREATE INDEX checkout_transactions_mode ON checkout_transactions (livemode, status, created_at)",
        ]
    }

    /// Responses not yet folded into the rollups. A response no longer adds to the hot rollup
    /// rows in its own transaction (on PostgreSQL every response of a day would take turns on
    /// them): it is listed here, and a job folds the list into the rollups four times a second.
    private static func unrolled(flag: String) -> [String] {
        [
            "CREATE TABLE cancel_flow_unrolled (response_id TEXT PRIMARY KEY, livemode \(flag) NOT NULL, created_at BIGINT NOT NULL)",
            "CREATE INDEX cancel_flow_unrolled_time ON cancel_flow_unrolled (livemode, created_at)",
            // The fold and the funnel go from the few listed responses to their answers.
            "CREATE INDEX cancel_flow_answers_response ON cancel_flow_answers (response_id)",
        ]
    }

    /// The cancel-flow funnel's daily rollups (see `CancelFlowResponseRepository`), filled from
    /// the responses already stored.
    private static func rollups(flag: String) -> [String] {
        rollupTables(.day, flag: flag) + [
            // The rows are read only for the partial days at a range's ends: by time first,
            // covering what the funnel counts, so those reads are short index ranges.
            "DROP INDEX cancel_flow_responses_funnel",
            """
            CREATE INDEX cancel_flow_responses_funnel ON cancel_flow_responses (
                livemode, created_at, actor, outcome, last_step_seen, pause_duration_days, offer_shown, offer_accepted,
                pause_shown, pause_accepted)
            """,
            "DROP INDEX cancel_flow_answers_counts",
            "CREATE INDEX cancel_flow_answers_counts ON cancel_flow_answers (livemode, created_at, question_id, option_id, has_text, actor)",
        ] + fillRollups([.day])
    }

    /// The two rollup tables of `grain`: per actor and outcome, and per value of each chart.
    private static func rollupTables(_ grain: CancelFlowRollups.Grain, flag: String) -> [String] {
        let key = grain.column
        return [
            """
            CREATE TABLE \(grain.table) (
                livemode \(flag) NOT NULL, \(key) BIGINT NOT NULL, actor TEXT NOT NULL, outcome TEXT NOT NULL, n BIGINT NOT NULL,
                offer_shown BIGINT NOT NULL, offer_accepted BIGINT NOT NULL, pause_shown BIGINT NOT NULL,
                pause_accepted BIGINT NOT NULL, PRIMARY KEY (livemode, \(key), actor, outcome))
            """,
            """
            CREATE TABLE \(grain.countsTable) (
                livemode \(flag) NOT NULL, actor TEXT NOT NULL, \(key) BIGINT NOT NULL, dimension TEXT NOT NULL,
                question_id INTEGER NOT NULL, value INTEGER NOT NULL, n BIGINT NOT NULL,
                PRIMARY KEY (livemode, actor, \(key), dimension, question_id, value))
            """,
        ]
    }

    /// Fills the (empty) rollup tables from the stored responses and answers. (Migration 6 made
    /// only the daily ones; migrations 13 and 17 fill the hourly and five-minute ones they make.)
    static var fillRollups: [String] { fillRollups(CancelFlowRollups.Grain.allCases) }
    static func fillRollups(_ grains: [CancelFlowRollups.Grain]) -> [String] {
        grains.flatMap { addToRollups($0, responses: "cancel_flow_responses", answers: "cancel_flow_answers", upsert: false) }
    }

    /// The responses of one mode listed in `cancel_flow_unrolled` and their answers, as row
    /// sources of `addToRollups` (from the short list to the rows, by key): all of them, or the
    /// `first` listed earliest (`unrolledIds(livemode:first:)`). `(1 = 1)` is true on both engines,
    /// whether the flag is INTEGER or BOOLEAN.
    ///
    /// Each engine is told the order: SQLite runs a CROSS JOIN's left table as the outer loop; on
    /// PostgreSQL the list is read once into an array whose rows are then found by key. Given a
    /// join, PostgreSQL's planner hashed the list and scanned every answer (a fold of 100 listed
    /// responses read all 22k answers, 7 ms, and more as the table grew; the responses likewise
    /// through the funnel's index), so a fold cost what the table held, not what it folded.
    static func unrolledResponses(_ kind: Store.Kind, livemode: Bool, first: Int? = nil) -> String {
        unrolled("cancel_flow_responses", key: "id", kind, livemode: livemode, first: first)
    }
    static func unrolledAnswers(_ kind: Store.Kind, livemode: Bool, first: Int? = nil) -> String {
        unrolled("cancel_flow_answers", key: "response_id", kind, livemode: livemode, first: first)
    }
    private static func unrolled(_ table: String, key: String, _ kind: Store.Kind, livemode: Bool, first: Int?) -> String {
        let ids = unrolledIds(livemode: livemode, first: first)
        return switch kind {
        case .sqlite: "(SELECT t.* FROM \(ids) u CROSS JOIN \(table) t WHERE t.\(key) = u.response_id) AS listed"
        case .postgres: "(SELECT t.* FROM \(table) t WHERE t.\(key) = ANY(ARRAY\(ids))) AS listed"
        }
    }
    /// The listed responses of one mode (a row source of `response_id`): all, or the `first`
    /// by the time they were made (their ids break ties, so every statement of one transaction
    /// reads the same ones).
    static func unrolledIds(livemode: Bool, first: Int? = nil) -> String {
        let listed = "SELECT response_id FROM cancel_flow_unrolled WHERE livemode = \(truth(livemode))"
        return "(\(listed)\(first.map { " ORDER BY created_at, response_id LIMIT \($0)" } ?? ""))"
    }
    private static func truth(_ value: Bool) -> String { value ? "(1 = 1)" : "(1 = 0)" }

    /// Adds the responses of the row source `responses` (and the answers of `answers`) to the
    /// rollups of `grain`: inserted, or with `upsert` added to the rows already there.
    static func addToRollups(_ grain: CancelFlowRollups.Grain, responses: String, answers: String, upsert: Bool) -> [String] {
        let bucket = "created_at - created_at % \(grain.seconds)", key = grain.column
        let table = grain.table, countsTable = grain.countsTable
        func counts(actor: String, _ count: CancelFlowRollups.Counted) -> String {
            // Constants stay out of GROUP BY (a number there is a column's position).
            let groups = ["livemode", actor, bucket, count.question, count.value].filter { $0.first != "'" && Int($0) == nil }
            return """
                INSERT INTO \(countsTable) (livemode, actor, \(key), dimension, question_id, value, n)
                SELECT livemode, \(actor), \(bucket), '\(count.dimension.rawValue)', \(count.question), \(count.value), count(*) \
                FROM \(count.fromAnswers ? answers : responses) WHERE \(count.filter) GROUP BY \(groups.joined(separator: ", "))
                """ + (upsert ? " ON CONFLICT (livemode, actor, \(key), dimension, question_id, value) DO UPDATE SET n = \(countsTable).n + excluded.n" : "")
        }
        // What each response adds: `CancelFlowRollups.flags` and `.counted` (the funnel's rows add the same).
        let sums = CancelFlowRollups.flags
        var statements = [
            """
            INSERT INTO \(table) (livemode, \(key), actor, outcome, n, \(sums.joined(separator: ", ")))
            SELECT livemode, \(bucket), actor, outcome, count(*), \(sums.map { "sum(\(CancelFlowRollups.oneIf($0)))" }.joined(separator: ", "))
            FROM \(responses) WHERE 1 = 1 GROUP BY livemode, \(bucket), actor, outcome
            """ + (upsert ? " ON CONFLICT (livemode, \(key), actor, outcome) DO UPDATE SET n = \(table).n + excluded.n, "
                + sums.map { "\($0) = \(table).\($0) + excluded.\($0)" }.joined(separator: ", ") : ""),
        ]
        for actor in ["actor", "'\(CancelFlowRollups.everyActor)'"] {
            statements += CancelFlowRollups.counted.map { counts(actor: actor, $0) }
        }
        return statements
    }

    private static func shared(flag: String, no: String) -> [(version: Int, statements: [String])] { [
        (1, [
            """
            CREATE TABLE customers (
                id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, country TEXT,
                created_at BIGINT NOT NULL, card_failing \(flag) NOT NULL DEFAULT \(no))
            """,
            "CREATE INDEX customers_email ON customers (email)",
            "CREATE INDEX customers_name ON customers (name)",
            """
            CREATE TABLE subscriptions (
                id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers (id),
                product_id TEXT NOT NULL, source TEXT NOT NULL, status TEXT NOT NULL,
                will_renew \(flag) NOT NULL, is_trial \(flag) NOT NULL DEFAULT \(no), trial_type TEXT,
                started_at BIGINT NOT NULL, current_period_end BIGINT, trial_ends_at BIGINT,
                cancelled_at BIGINT, access_until BIGINT, cancel_reason TEXT,
                paused_at BIGINT, pause_resumes_at BIGINT, grace_period_ends_at BIGINT,
                past_due_since BIGINT, expiration_intent INTEGER, original_transaction_id TEXT,
                price_micros BIGINT NOT NULL, currency TEXT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX subscriptions_customer ON subscriptions (customer_id)",
            """
            CREATE TABLE discounts (
                id TEXT PRIMARY KEY, subscription_id TEXT NOT NULL REFERENCES subscriptions (id),
                offer_key TEXT NOT NULL, percent_off INTEGER, amount_off_micros BIGINT, free_days INTEGER, duration TEXT NOT NULL,
                duration_in_months INTEGER, starts_at BIGINT NOT NULL, ends_at BIGINT,
                UNIQUE (subscription_id, offer_key))
            """,
            """
            CREATE TABLE charges (
                id TEXT PRIMARY KEY, subscription_id TEXT NOT NULL REFERENCES subscriptions (id),
                amount_micros BIGINT NOT NULL, currency TEXT NOT NULL, period_start BIGINT NOT NULL,
                period_end BIGINT NOT NULL, status TEXT NOT NULL, at BIGINT NOT NULL)
            """,
            "CREATE INDEX charges_subscription ON charges (subscription_id, at)",
            """
            CREATE TABLE cancel_flow_responses (
                id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers (id),
                product_id TEXT NOT NULL, outcome TEXT NOT NULL, offer_shown \(flag) NOT NULL,
                offer_accepted \(flag) NOT NULL, pause_shown \(flag) NOT NULL, pause_accepted \(flag) NOT NULL,
                pause_duration_days INTEGER, last_step_seen INTEGER NOT NULL, answers TEXT NOT NULL,
                variant_id TEXT, actor TEXT NOT NULL, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX cancel_flow_responses_created ON cancel_flow_responses (created_at)",
            "CREATE INDEX cancel_flow_responses_actor ON cancel_flow_responses (actor, created_at)",
            // Covers the funnel's one grouped pass, so it reads the index and never the table.
            """
            CREATE INDEX cancel_flow_responses_funnel ON cancel_flow_responses (
                actor, outcome, last_step_seen, pause_duration_days, offer_shown, offer_accepted, pause_shown,
                pause_accepted, created_at)
            """,
            """
            CREATE TABLE cancel_flow_answers (
                response_id TEXT NOT NULL REFERENCES cancel_flow_responses (id), question_id INTEGER NOT NULL,
                option_id INTEGER, free_text TEXT, has_text \(flag) NOT NULL, actor TEXT NOT NULL, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX cancel_flow_answers_question ON cancel_flow_answers (question_id, created_at)",
            "CREATE INDEX cancel_flow_answers_counts ON cancel_flow_answers (question_id, option_id, has_text, actor, created_at)",
            """
            CREATE TABLE audit_events (
                id TEXT PRIMARY KEY, at BIGINT NOT NULL, actor TEXT NOT NULL,
                customer_id TEXT NOT NULL REFERENCES customers (id), action TEXT NOT NULL,
                parameters TEXT NOT NULL, before_state TEXT, after_state TEXT, request_id TEXT NOT NULL)
            """,
            "CREATE INDEX audit_events_customer ON audit_events (customer_id, at)",
            """
            CREATE TABLE idempotency_records (
                idempotency_key TEXT NOT NULL, route TEXT NOT NULL, principal TEXT NOT NULL,
                fingerprint TEXT NOT NULL, body TEXT NOT NULL, created_at BIGINT NOT NULL,
                PRIMARY KEY (idempotency_key, route, principal))
            """,
            """
            CREATE TABLE portal_sessions (
                token TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers (id),
                expires_at BIGINT NOT NULL, return_url TEXT)
            """,
            """
            CREATE TABLE offer_impressions (
                customer_id TEXT NOT NULL REFERENCES customers (id), session_id TEXT NOT NULL,
                variant_id TEXT NOT NULL, product_id TEXT NOT NULL, flow_type TEXT NOT NULL,
                created_at BIGINT NOT NULL, PRIMARY KEY (customer_id, session_id, variant_id))
            """,
            "CREATE INDEX offer_impressions_created ON offer_impressions (created_at)",
            """
            CREATE TABLE migration_conversions (
                customer_id TEXT PRIMARY KEY REFERENCES customers (id), variant_id TEXT NOT NULL,
                source TEXT, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX migration_conversions_created ON migration_conversions (created_at)",
            """
            CREATE TABLE win_back_codes (
                code TEXT PRIMARY KEY, customer_id TEXT REFERENCES customers (id), issued_by TEXT, issued_at BIGINT)
            """,
            """
            CREATE TABLE appstore_notifications (
                notification_uuid TEXT PRIMARY KEY, notification_type TEXT NOT NULL, subtype TEXT,
                original_transaction_id TEXT, outcome TEXT NOT NULL, received_at BIGINT NOT NULL)
            """,
            "CREATE INDEX subscriptions_original_transaction ON subscriptions (original_transaction_id)",
            """
            CREATE TABLE checkout_transactions (
                id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers (id), product_id TEXT NOT NULL,
                status TEXT NOT NULL, amount BIGINT NOT NULL, original_amount BIGINT NOT NULL, pending_amount BIGINT NOT NULL,
                currency TEXT NOT NULL, discount_percent INTEGER NOT NULL, trial_type TEXT, trial_end BIGINT,
                storekit_original_transaction_id TEXT, storekit_status INTEGER, subscription_id TEXT,
                created_at BIGINT NOT NULL, purchased_at BIGINT)
            """,
            "CREATE INDEX checkout_transactions_customer ON checkout_transactions (customer_id, product_id)",
            """
            CREATE TABLE switch_dismissals (
                customer_id TEXT PRIMARY KEY REFERENCES customers (id), flow_type TEXT NOT NULL,
                dismissed_by TEXT NOT NULL, dismissed_at BIGINT NOT NULL, variant_id TEXT)
            """,
        ]),
        // Test and live data never mix; App Store state moves only on newer signed data; data with a
        // lifetime (idempotency records, portal sessions, abandoned checkouts) can be purged.
        (2, [
            "ALTER TABLE customers ADD COLUMN livemode \(flag) NOT NULL DEFAULT \(no)",
            "ALTER TABLE subscriptions ADD COLUMN livemode \(flag) NOT NULL DEFAULT \(no)",
            // Milliseconds: the signedDate of the newest signed transaction or notification applied,
            // and of the newest signed renewal info.
            "ALTER TABLE subscriptions ADD COLUMN appstore_signed_at BIGINT",
            "ALTER TABLE subscriptions ADD COLUMN appstore_renewal_signed_at BIGINT",
            "ALTER TABLE checkout_transactions ADD COLUMN livemode \(flag) NOT NULL DEFAULT \(no)",
            "ALTER TABLE cancel_flow_responses ADD COLUMN livemode \(flag) NOT NULL DEFAULT \(no)",
            "ALTER TABLE cancel_flow_answers ADD COLUMN livemode \(flag) NOT NULL DEFAULT \(no)",
            "ALTER TABLE offer_impressions ADD COLUMN livemode \(flag) NOT NULL DEFAULT \(no)",
            "ALTER TABLE migration_conversions ADD COLUMN livemode \(flag) NOT NULL DEFAULT \(no)",
            "ALTER TABLE portal_sessions ADD COLUMN used_at BIGINT",
            "CREATE TABLE test_clock (id INTEGER PRIMARY KEY, offset_seconds BIGINT NOT NULL)",
            "CREATE INDEX customers_mode_name ON customers (livemode, name, id)",
            "CREATE INDEX idempotency_records_created ON idempotency_records (created_at)",
            "CREATE INDEX checkout_transactions_status ON checkout_transactions (status, created_at)",
            "CREATE INDEX portal_sessions_expires ON portal_sessions (expires_at)",
            "DROP INDEX cancel_flow_responses_funnel",
            """
            CREATE INDEX cancel_flow_responses_funnel ON cancel_flow_responses (
                livemode, actor, outcome, last_step_seen, pause_duration_days, offer_shown, offer_accepted, pause_shown,
                pause_accepted, created_at)
            """,
            "DROP INDEX cancel_flow_answers_counts",
            "CREATE INDEX cancel_flow_answers_counts ON cancel_flow_answers (livemode, question_id, option_id, has_text, actor, created_at)",
        ]),
        // The SDK's protocol: deferred checkouts get a client secret once; funnel events.
        (3, [
            "ALTER TABLE checkout_transactions ADD COLUMN client_secret TEXT",
            "ALTER TABLE checkout_transactions ADD COLUMN mode TEXT",
            """
            CREATE TABLE funnel_events (
                id TEXT PRIMARY KEY, event_type TEXT NOT NULL, user_id TEXT NOT NULL, product_id TEXT NOT NULL,
                screen_name TEXT, metadata TEXT, livemode \(flag) NOT NULL, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX funnel_events_created ON funnel_events (livemode, created_at)",
        ]),
        // The App Store half of the cancel flow: cancellations read out and Apple's confirmation;
        // offer codes kept for subscribers who stay, in their own pool.
        (4, [
            """
            CREATE TABLE appstore_cancellations (
                id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers (id),
                subscription_id TEXT NOT NULL REFERENCES subscriptions (id), product_id TEXT NOT NULL,
                read_out_at BIGINT NOT NULL, read_out_by TEXT NOT NULL, confirmed_at BIGINT, livemode \(flag) NOT NULL)
            """,
            "CREATE INDEX appstore_cancellations_subscription ON appstore_cancellations (subscription_id, confirmed_at)",
            "CREATE INDEX appstore_cancellations_read ON appstore_cancellations (livemode, read_out_at)",
            "CREATE INDEX appstore_cancellations_confirmed ON appstore_cancellations (livemode, confirmed_at)",
            "ALTER TABLE win_back_codes ADD COLUMN pool TEXT NOT NULL DEFAULT 'win_back'",
            "CREATE INDEX win_back_codes_pool ON win_back_codes (pool, customer_id, code)",
        ]),
    ] }

    // Customer search: a trigram index over email and name (a substring search reads the
    // index, not the table) and lowercase indexes for prefixes, a count of customers per
    // mode, and an index for the name-ordered listing per mode; triggers keep them in step.
    private static let sqliteSearch: [String] = [
        "CREATE VIRTUAL TABLE customer_search USING fts5(email, name, content = 'customers', tokenize = 'trigram')",
        "INSERT INTO customer_search (customer_search) VALUES ('rebuild')",
        """
        CREATE TRIGGER customers_search_insert AFTER INSERT ON customers BEGIN
            INSERT INTO customer_search (rowid, email, name) VALUES (new.rowid, new.email, new.name);
            INSERT INTO customer_counts (livemode, n) VALUES (new.livemode, 1)
                ON CONFLICT (livemode) DO UPDATE SET n = n + 1;
        END
        """,
        """
        CREATE TRIGGER customers_search_update AFTER UPDATE OF email, name ON customers BEGIN
            INSERT INTO customer_search (customer_search, rowid, email, name) VALUES ('delete', old.rowid, old.email, old.name);
            INSERT INTO customer_search (rowid, email, name) VALUES (new.rowid, new.email, new.name);
        END
        """,
        """
        CREATE TRIGGER customers_search_delete AFTER DELETE ON customers BEGIN
            INSERT INTO customer_search (customer_search, rowid, email, name) VALUES ('delete', old.rowid, old.email, old.name);
            UPDATE customer_counts SET n = n - 1 WHERE livemode = old.livemode;
        END
        """,
        "CREATE TABLE customer_counts (livemode INTEGER PRIMARY KEY, n BIGINT NOT NULL)",
        "INSERT INTO customer_counts (livemode, n) SELECT livemode, count(*) FROM customers GROUP BY livemode",
        "CREATE INDEX customers_listing ON customers (livemode, name, id)",
        "CREATE INDEX customers_name_lower ON customers (livemode, lower(name))",
        "CREATE INDEX customers_email_lower ON customers (livemode, lower(email))",
    ]

    // SQLite: the prefix indexes also hold the order of a page (the lowercased name, then the
    // id), so a one- or two-character search sorts its matches without reading their rows.
    private static let sqliteSortedPrefixes: [String] = [
        "DROP INDEX customers_name_lower",
        "CREATE INDEX customers_name_lower ON customers (livemode, lower(name), id)",
        "DROP INDEX customers_email_lower",
        "CREATE INDEX customers_email_lower ON customers (livemode, lower(email), lower(name), id)",
    ]

    // On PostgreSQL: trigram indexes (pg_trgm) over the lowercased email and name serve a
    // substring LIKE, pattern indexes serve a prefix, and the count per mode is counted.
    private static let postgresSearch: [String] = [
        "CREATE EXTENSION IF NOT EXISTS pg_trgm",
        "CREATE INDEX customers_email_trigram ON customers USING gin (lower(email) gin_trgm_ops)",
        "CREATE INDEX customers_name_trigram ON customers USING gin (lower(name) gin_trgm_ops)",
        "CREATE INDEX customers_listing ON customers (livemode, name, id)",
        "CREATE INDEX customers_name_lower ON customers (livemode, lower(name) text_pattern_ops)",
        "CREATE INDEX customers_email_lower ON customers (livemode, lower(email) text_pattern_ops)",
    ]
}
