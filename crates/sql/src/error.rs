//! SQL errors as MySQL reports them: an error number, a SQLSTATE and a
//! message. Lower-layer errors (rel, txn, engine) map onto MySQL's codes
//! here, in one place.

/// An error sent to the client as an ERR packet.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlError {
    pub code: u16,
    pub state: &'static str,
    pub msg: String,
}

impl SqlError {
    /// Whether this is [`SqlError::read_view_too_old`] (not worth re-running in the
    /// same transaction).
    pub fn is_read_view_too_old(&self) -> bool {
        self.code == ER_TABLE_DEF_CHANGED_FOR_VIEW && self.msg.ends_with("read view)")
    }

    /// The error that ended a `strata_bulk_load` load of `table` and
    /// dropped its `rows` rows (those of statements already answered OK):
    /// the same code, the message saying so.
    pub fn bulk_load_lost(self, table: impl std::fmt::Display, rows: u64) -> SqlError {
        SqlError {
            msg: format!(
                "{} (strata_bulk_load of {table} failed: none of its {rows} rows were loaded)",
                self.msg
            ),
            ..self
        }
    }
}

/// Result alias.
pub type Result<T> = std::result::Result<T, SqlError>;

impl From<rel::ttl::TtlError> for SqlError {
    fn from(e: rel::ttl::TtlError) -> SqlError {
        use rel::ttl::TtlError as T;
        match e {
            T::Duration(d) => SqlError::ttl_duration_format(d),
            T::HiddenPk => SqlError::ttl_unsupported(),
            T::Column(c) => SqlError::ttl_col_format(c),
            T::Unsupported(w) => SqlError::unsupported(w),
        }
    }
}

/// Declares MySQL's errors that Strata reports: for each, a named
/// constructor on [`SqlError`] (the only way to make one), its code as a
/// constant named as in MySQL's sources, and a row of [`ERRORS`].
macro_rules! mysql_errors {
    ($(
        $(#[$doc:meta])*
        $name:ident = $code:literal, $state:literal, fn $ctor:ident($($arg:ident),*) => $fmt:literal;
    )*) => {
        $( pub const $name: u16 = $code; )*

        impl SqlError {
            $(
                $(#[$doc])*
                pub fn $ctor($($arg: impl std::fmt::Display),*) -> SqlError {
                    SqlError::new($code, $state, format!($fmt $(, $arg = $arg)*))
                }
            )*
        }

        /// Every error above: (code, SQLSTATE, MySQL's name, message template).
        pub const ERRORS: &[(u16, &str, &str, &str)] = &[
            $( ($code, $state, stringify!($name), $fmt), )*
        ];
    };
}

mysql_errors! {
    // Statements and names.
    /// Syntax error.
    ER_PARSE_ERROR = 1064, "42000", fn parse(msg) => "You have an error in your SQL syntax; {msg}";
    /// A statement, clause or option Strata does not run: never silently ignored.
    ER_NOT_SUPPORTED_YET = 1235, "42000", fn unsupported(what) => "This version of Strata doesn't yet support '{what}'";
    /// A warning: something accepted that Strata honours only in part (what and how).
    WARN_NOT_HONOURED = 1235, "42000", fn not_honoured(what) => "{what}";
    /// An internal problem, reported instead of a panic.
    ER_UNKNOWN_ERROR = 1105, "HY000", fn internal(msg) => "{msg}";
    ER_FLUSH_MASTER_BINLOG_CLOSED = 1186, "HY000", fn binlog_closed() => "Binlog closed, cannot RESET MASTER";
    ER_UNKNOWN_TARGET_BINLOG = 1373, "HY000", fn unknown_target_binlog() => "Target log not found in binlog index";
    ER_NO_BINARY_LOGGING = 1381, "HY000", fn no_binary_logging() => "You are not using binary logging";
    // Replication (crates/sql/src/replica).
    ER_SLAVE_MUST_STOP = 1198, "HY000", fn slave_must_stop() => "This operation cannot be performed as you have a running slave ''; run STOP SLAVE '' first";
    ER_BAD_SLAVE = 1200, "HY000", fn bad_slave() => "The server is not configured as slave; fix in config file or with CHANGE MASTER TO";
    ER_INCORRECT_GTID_STATE = 1941, "HY000", fn incorrect_gtid_state() => "Could not parse GTID list";
    ER_DUPLICATE_GTID_DOMAIN = 1943, "HY000", fn duplicate_gtid_domain(a, b, d) => "GTID {a} and {b} conflict (duplicate domain id {d})";
    ER_SLAVE_WAS_RUNNING = 1254, "HY000", fn slave_was_running() => "Slave is already running";
    ER_SLAVE_WAS_NOT_RUNNING = 1255, "HY000", fn slave_was_not_running() => "Slave already has been stopped";
    ER_SLAVE_CONVERSION_FAILED = 1677, "HY000", fn slave_conversion_failed(col, table, from, to) => "Column {col} of table '{table}' cannot be converted from type '{from}' to type '{to}'";
    ER_KEY_NOT_FOUND = 1032, "HY000", fn key_not_found(table) => "Can't find record in '{table}'";
    ER_ERROR_WHEN_EXECUTING_COMMAND = 1220, "HY000", fn binlog_command_failed(cmd, why) => "Error when executing command {cmd}: {why}";
    ER_UNKNOWN_CHARACTER_SET = 1115, "42000", fn unknown_charset(cs) => "Unknown character set: '{cs}'";
    ER_UNKNOWN_COLLATION = 1273, "HY000", fn unknown_collation(c) => "Unknown collation: '{c}'";
    ER_COLLATION_CHARSET_MISMATCH = 1253, "42000", fn collation_charset_mismatch(c, cs) => "COLLATION '{c}' is not valid for CHARACTER SET '{cs}'";
    ER_CANT_AGGREGATE_2COLLATIONS = 1267, "HY000", fn illegal_mix(a, ca, b, cb, op) => "Illegal mix of collations ({a},{ca}) and ({b},{cb}) for operation '{op}'";
    ER_EMPTY_QUERY = 1065, "42000", fn empty_query() => "Query was empty";
    ER_NO_DB_ERROR = 1046, "3D000", fn no_db() => "No database selected";
    ER_BAD_DB_ERROR = 1049, "42000", fn bad_db(db) => "Unknown database '{db}'";
    ER_UNKNOWN_STORAGE_ENGINE = 1286, "42000", fn unknown_engine(name) => "Unknown storage engine '{name}'";
    // TTL tables (MyRocks' errors, MariaDB's numbers).
    ER_RDB_TTL_DURATION_FORMAT = 4066, "HY000", fn ttl_duration_format(d) => "TTL duration ({d}) in MyRocks must be an unsigned non-null 64-bit integer.";
    ER_RDB_TTL_UNSUPPORTED = 4069, "HY000", fn ttl_unsupported() => "TTL support is currently disabled when table has a hidden PK.";
    ER_RDB_TTL_COL_FORMAT = 4070, "HY000", fn ttl_col_format(c) => "TTL column ({c}) in MyRocks must be an unsigned non-null 64-bit integer, exist inside the table, and have an accompanying ttl duration.";
    // Accounts and privileges (crates/sql/src/account).
    ER_CANNOT_USER = 1396, "HY000", fn cannot_user(op, users) => "Operation {op} failed for {users}";
    ER_USER_CREATE_EXISTS = 1973, "HY000", fn user_exists(user) => "Can't create user {user}; it already exists";
    ER_USER_DROP_EXISTS = 1974, "HY000", fn user_missing(user) => "Can't drop user {user}; it doesn't exist";
    ER_PASSWORD_NO_MATCH = 1133, "28000", fn password_no_match() => "Can't find any matching row in the user table";
    ER_NONEXISTING_GRANT = 1141, "42000", fn no_such_grant(user, host) => "There is no such grant defined for user '{user}' on host '{host}'";
    ER_NONEXISTING_TABLE_GRANT = 1147, "42000", fn no_such_table_grant(user, host, table) => "There is no such grant defined for user '{user}' on host '{host}' on table '{table}'";
    ER_ILLEGAL_GRANT_FOR_TABLE = 1144, "42000", fn illegal_grant_for_table() => "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used";
    ER_PASSWD_LENGTH = 1372, "HY000", fn passwd_length() => "Password hash should be a 41-digit hexadecimal number";
    ER_PASSWORD_FORMAT = 1827, "HY000", fn password_format() => "The password hash doesn't have the expected format.";
    ER_NOT_VALID_PASSWORD = 1819, "HY000", fn not_valid_password() => "Your password does not satisfy the current policy requirements";
    ER_DBACCESS_DENIED_ERROR = 1044, "42000", fn db_access_denied(user, host, db) => "Access denied for user '{user}'@'{host}' to database '{db}'";
    ER_COLUMNACCESS_DENIED_ERROR = 1143, "42000", fn column_access_denied(cmd, user, host, column, table) => "{cmd} command denied to user '{user}'@'{host}' for column '{column}' in table '{table}'";
    ER_TABLEACCESS_DENIED_ERROR = 1142, "42000", fn table_access_denied(cmd, user, host, db, table) => "{cmd} command denied to user '{user}'@'{host}' for table `{db}`.`{table}`";
    ER_SPECIFIC_ACCESS_DENIED_ERROR = 1227, "42000", fn specific_access_denied(privs) => "Access denied; you need (at least one of) the {privs} privilege(s) for this operation";
    ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_SQL_LOG_BIN = 1694, "HY000", fn sql_log_bin_in_txn() => "Cannot modify @@session.sql_log_bin inside a transaction";
    ER_ACCESS_DENIED_ERROR = 1045, "28000", fn access_denied(user, host, pw) => "Access denied for user '{user}'@'{host}' (using password: {pw})";
    /// MySQL's refusal of a plain TCP connection under require_secure_transport (MariaDB
    /// 10.11 answers 1045 instead, which hides the reason).
    ER_SECURE_TRANSPORT_REQUIRED = 3159, "HY000", fn secure_transport_required() => "Connections using insecure transport are prohibited while --require_secure_transport=ON.";
    ER_DB_CREATE_EXISTS = 1007, "HY000", fn db_exists(db) => "Can't create database '{db}'; database exists";
    ER_DB_DROP_EXISTS = 1008, "HY000", fn db_drop_missing(db) => "Can't drop database '{db}'; database doesn't exist";
    /// `name` is `db.table`.
    ER_NO_SUCH_TABLE = 1146, "42S02", fn no_table(name) => "Table '{name}' doesn't exist";
    ER_TABLE_EXISTS_ERROR = 1050, "42S01", fn table_exists(name) => "Table '{name}' already exists";
    ER_UNKNOWN_TABLE = 1109, "42S02", fn unknown_schema_table(name) => "Unknown table '{name}' in information_schema";
    ER_UNKNOWN_TABLE_MULTI = 1109, "42S02", fn unknown_table_in(name, place) => "Unknown table '{name}' in {place}";
    ER_NON_UPDATABLE_TABLE = 1288, "HY000", fn not_updatable(name, verb) => "The target table {name} of the {verb} is not updatable";
    ER_WRONG_DB_NAME = 1102, "42000", fn wrong_db_name(name) => "Incorrect database name '{name}'";
    ER_WRONG_TABLE_NAME = 1103, "42000", fn wrong_table_name(name) => "Incorrect table name '{name}'";
    ER_WRONG_COLUMN_NAME = 1166, "42000", fn wrong_column_name(name) => "Incorrect column name '{name}'";
    ER_WRONG_NAME_FOR_INDEX = 1280, "42000", fn wrong_index_name(name) => "Incorrect index name '{name}'";
    ER_WRONG_STRING_LENGTH = 1470, "HY000", fn string_too_long(s, what, max) => "String '{s}' is too long for {what} (should be no longer than {max})";
    ER_WRONG_USAGE = 1221, "HY000", fn wrong_usage(a, b) => "Incorrect usage of {a} and {b}";
    ER_BAD_TABLE_ERROR = 1051, "42S02", fn unknown_table(name) => "Unknown table '{name}'";
    ER_BAD_FIELD_ERROR = 1054, "42S22", fn unknown_column(name, place) => "Unknown column '{name}' in '{place}'";
    ER_NON_UNIQ_ERROR = 1052, "23000", fn ambiguous_column(name, place) => "Column '{name}' in {place} is ambiguous";
    ER_NONUNIQ_TABLE = 1066, "42000", fn duplicate_alias(alias) => "Not unique table/alias: '{alias}'";
    ER_NO_TABLES_USED = 1096, "HY000", fn no_tables_used() => "No tables used";
    ER_SP_DOES_NOT_EXIST = 1305, "42000", fn unknown_function(name) => "FUNCTION {name} does not exist";
    ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT = 1582, "42000", fn wrong_param_count() => "Incorrect parameter count in the call to native function";
    ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT_NAMED = 1582, "42000", fn wrong_param_count_to(f) => "Incorrect parameter count in the call to native function '{f}'";
    ER_INVALID_GROUP_FUNC_USE = 1111, "HY000", fn invalid_group_function() => "Invalid use of group function";
    ER_WRONG_ARGUMENTS = 1210, "HY000", fn wrong_arguments(to) => "Incorrect arguments to {to}";
    /// A bad regular expression (MariaDB's code and text).
    ER_REGEXP_ERROR = 1139, "42000", fn regexp(what) => "Got error '{what}' from regexp";
    ER_WRONG_VALUE = 1525, "HY000", fn wrong_value(kind) => "Incorrect {kind} value";
    ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT = 1222, "21000", fn union_column_count() => "The used SELECT statements have a different number of columns";
    ER_OPERAND_COLUMNS = 1241, "21000", fn operand_columns(n) => "Operand should contain {n} column(s)";
    ER_SUBQUERY_NO_1_ROW = 1242, "21000", fn subquery_rows() => "Subquery returns more than 1 row";
    ER_UPDATE_TABLE_USED = 1093, "HY000", fn update_table_used(table) => "Table '{table}' is specified twice, both as a target for 'UPDATE' and as a separate source for data";
    ER_DERIVED_MUST_HAVE_ALIAS = 1248, "42000", fn derived_alias() => "Every derived table must have its own alias";
    ER_UNKNOWN_SYSTEM_VARIABLE = 1193, "HY000", fn unknown_variable(name) => "Unknown system variable '{name}'";
    ER_INCORRECT_GLOBAL_LOCAL_VAR = 1238, "HY000", fn read_only_variable(name) => "Variable '{name}' is a read only variable";
    ER_GLOBAL_VARIABLE = 1229, "HY000", fn global_variable(name) => "Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL";
    ER_WRONG_VALUE_FOR_VAR = 1231, "42000", fn wrong_value_for_var(name, value) => "Variable '{name}' can't be set to the value of '{value}'";
    /// A value of the wrong kind for a variable (sql_mode = 1.5).
    ER_WRONG_TYPE_FOR_VAR = 1232, "42000", fn wrong_type_for_var(name) => "Incorrect argument type to variable '{name}'";
    ER_UNKNOWN_TIME_ZONE = 1298, "HY000", fn unknown_time_zone(tz) => "Unknown or incorrect time zone: '{tz}'";
    ER_INVALID_CHARACTER_STRING = 1300, "HY000", fn invalid_character_string(shown) => "Invalid utf8mb4 character string: '{shown}'";
    /// An expression nested deeper than the recursive passes allow.
    ER_STACK_OVERRUN_NEED_MORE = 1436, "HY000", fn too_deep(n, max) => "Thread stack overrun: an expression chains {n} operators, more than the {max} supported; split the statement";
    /// Views and subqueries nested deeper than planning's recursion allows.
    ER_STACK_OVERRUN_PLAN = 1436, "HY000", fn plan_too_deep(max) => "Thread stack overrun: views and subqueries nest more than {max} levels deep; simplify the statement";

    // Window functions: MariaDB's codes and texts (the differential test's reference;
    // MySQL 8 numbers them 3579-3596).
    ER_WRONG_WINDOW_SPEC_NAME = 4009, "HY000", fn window_undefined(name) => "Window specification with name '{name}' is not defined";
    ER_DUP_WINDOW_NAME = 4010, "HY000", fn window_duplicate(name) => "Multiple window specifications with the same name '{name}'";
    ER_PARTITION_LIST_IN_REFERENCING_WINDOW_SPEC = 4011, "HY000", fn window_ref_partition(name) => "Window specification referencing another one '{name}' cannot contain partition list";
    ER_ORDER_LIST_IN_REFERENCING_WINDOW_SPEC = 4012, "HY000", fn window_ref_order(name) => "Referenced window specification '{name}' already contains order list";
    ER_WINDOW_FRAME_IN_REFERENCED_WINDOW_SPEC = 4013, "HY000", fn window_ref_frame(name) => "Referenced window specification '{name}' cannot contain window frame";
    ER_BAD_COMBINATION_OF_WINDOW_FRAME_BOUND_SPECS = 4014, "HY000", fn window_bad_bounds() => "Unacceptable combination of window frame bound specifications";
    /// A window function outside the select list and ORDER BY (WHERE, GROUP BY, HAVING, a window spec).
    ER_WRONG_PLACEMENT_OF_WINDOW_FUNCTION = 4015, "HY000", fn window_placement() => "Window function is allowed only in SELECT list and ORDER BY clause";
    ER_NOT_ALLOWED_WINDOW_FRAME = 4017, "HY000", fn window_frame_not_allowed(func) => "Window frame is not allowed with '{func}'";
    ER_NO_ORDER_LIST_IN_WINDOW_SPEC = 4018, "HY000", fn window_needs_order(func) => "No order list in window specification for '{func}'";
    ER_RANGE_FRAME_NEEDS_SIMPLE_ORDERBY = 4019, "HY000", fn window_range_order() => "RANGE-type frame requires ORDER BY clause with single sort key";
    ER_WRONG_TYPE_FOR_ROWS_FRAME = 4020, "HY000", fn window_rows_type() => "Integer is required for ROWS-type frame";
    ER_WRONG_TYPE_FOR_RANGE_FRAME = 4021, "HY000", fn window_range_type() => "Numeric datatype is required for RANGE-type frame";
    ER_INVALID_NTILE_ARGUMENT = 4024, "HY000", fn ntile_argument() => "Argument of NTILE must be greater than 0";
    ER_SUM_FUNC_WITH_WINDOW_FUNC_AS_ARG = 4074, "HY000", fn window_in_aggregate() => "Window functions can not be used as arguments to group functions.";
    // Data.
    ER_DUP_ENTRY = 1062, "23000", fn dup_entry(key, index) => "Duplicate entry '{key}' for key '{index}'";
    /// MariaDB's ER_CONSTRAINT_FAILED: a CHECK constraint is FALSE for a row.
    ER_CONSTRAINT_FAILED = 4025, "23000", fn constraint_failed(name, db, table) => "CONSTRAINT `{name}` failed for `{db}`.`{table}`";
    ER_BAD_NULL_ERROR = 1048, "23000", fn not_null(column) => "Column '{column}' cannot be null";
    ER_NO_DEFAULT_FOR_FIELD = 1364, "HY000", fn no_default(column) => "Field '{column}' doesn't have a default value";
    ER_WRONG_VALUE_COUNT_ON_ROW = 1136, "21S01", fn value_count(row) => "Column count doesn't match value count at row {row}";
    ER_WARN_DATA_OUT_OF_RANGE = 1264, "22003", fn column_out_of_range(column, row) => "Out of range value for column '{column}' at row {row}";
    /// ALTER TABLE's conversion of a stored value that does not fit (also NULL into NOT NULL).
    WARN_DATA_TRUNCATED = 1265, "01000", fn data_truncated(column, row) => "Data truncated for column '{column}' at row {row}";
    ER_DATA_TOO_LONG = 1406, "22001", fn data_too_long(column, row) => "Data too long for column '{column}' at row {row}";
    /// A bad string or number for a column.
    ER_TRUNCATED_WRONG_VALUE_FOR_FIELD = 1366, "HY000", fn incorrect_value(kind, value, column, row) => "Incorrect {kind} value: '{value}' for column '{column}' at row {row}";
    /// A bad date, datetime or time for a column.
    ER_TRUNCATED_WRONG_VALUE = 1292, "22007", fn incorrect_temporal(kind, value, column, row) => "Incorrect {kind} value: '{value}' for column '{column}' at row {row}";
    /// A string read as a number with something left over (a warning).
    WARN_TRUNCATED_WRONG_VALUE = 1292, "22007", fn truncated_value(kind, value) => "Truncated incorrect {kind} value: '{value}'";
    /// x/0, x DIV 0, x MOD 0: a warning (NULL), an error under strict mode with
    /// ERROR_FOR_DIVISION_BY_ZERO in INSERT and UPDATE.
    ER_DIVISION_BY_ZERO = 1365, "22012", fn division_by_zero() => "Division by 0";
    /// UPDATE or DELETE without a key in the WHERE clause (and no LIMIT) under sql_safe_updates.
    ER_UPDATE_WITHOUT_KEY_IN_SAFE_MODE = 1175, "HY000", fn safe_update() => "You are using safe update mode and you tried to update a table without a WHERE that uses a KEY column";
    ER_DATA_OUT_OF_RANGE = 1690, "22003", fn out_of_range(kind, expr) => "{kind} value is out of range in '{expr}'";
    WARN_ALLOWED_PACKET_OVERFLOWED = 1301, "HY000", fn packet_overflowed(function, max) => "Result of {function}() was larger than max_allowed_packet ({max}) - truncated";
    // JSON functions (MariaDB's warnings; the function answers NULL).
    ER_JSON_BAD_CHR = 4036, "HY000", fn json_bad_char(n, f, pos) => "Character disallowed in JSON in argument {n} to function '{f}' at position {pos}";
    ER_JSON_EOS = 4037, "HY000", fn json_eos(n, f) => "Unexpected end of JSON text in argument {n} to function '{f}'";
    ER_JSON_SYNTAX = 4038, "HY000", fn json_syntax(n, f, pos) => "Syntax error in JSON text in argument {n} to function '{f}' at position {pos}";
    ER_JSON_DEPTH = 4040, "HY000", fn json_depth(n, f, pos) => "Limit of 32 on JSON nested structures depth is reached in argument {n} to function '{f}' at position {pos}";
    ER_JSON_PATH_EOS = 4041, "HY000", fn json_path_eos(n, f) => "Unexpected end of JSON path in argument {n} to function '{f}'";
    ER_JSON_PATH_SYNTAX = 4042, "HY000", fn json_path_syntax(n, f, pos) => "Syntax error in JSON path in argument {n} to function '{f}' at position {pos}";
    ER_JSON_PATH_DEPTH = 4043, "HY000", fn json_path_depth(n, f, pos) => "Limit of 32 on JSON path depth is reached in argument {n} to function '{f}' at position {pos}";
    ER_JSON_PATH_NO_WILDCARD = 4044, "HY000", fn json_path_wildcard(n, f) => "Wildcards or range in JSON path not allowed in argument {n} to function '{f}'";
    ER_JSON_ONE_OR_ALL = 4046, "HY000", fn json_one_or_all(f) => "Argument 2 to function '{f}' must be \"one\" or \"all\".";
    ER_JSON_PATH_DOLLAR = 4051, "HY000", fn json_path_dollar(n, f) => "Path expression '$' is not allowed in argument {n} to function '{f}'.";
    ER_CUT_VALUE_GROUP_CONCAT = 1260, "HY000", fn group_concat_cut(row) => "Row {row} was cut by GROUP_CONCAT()";
    ER_RECORD_FILE_FULL = 1114, "HY000", fn table_full(table) => "The table '{table}' is full";
    ER_TOO_MANY_ROWS = 1172, "42000", fn too_many_rows() => "Result consisted of more than one row";
    ER_SP_FETCH_NO_DATA = 1329, "02000", fn no_data() => "No data - zero rows fetched, selected, or processed";
    /// `constraint`: `db`.`child`, CONSTRAINT ... (rel::fk::describe_in_table).
    ER_NO_REFERENCED_ROW_2 = 1452, "23000", fn no_referenced_row(constraint) => "Cannot add or update a child row: a foreign key constraint fails ({constraint})";
    ER_ROW_IS_REFERENCED_2 = 1451, "23000", fn row_is_referenced(constraint) => "Cannot delete or update a parent row: a foreign key constraint fails ({constraint})";
    /// DROP TABLE of a table other tables' foreign keys reference (MariaDB's text).
    ER_ROW_IS_REFERENCED = 1451, "23000", fn table_is_referenced() => "Cannot delete or update a parent row: a foreign key constraint fails";
    ER_FK_DEPTH_EXCEEDED = 3008, "HY000", fn fk_depth(max) => "Foreign key cascade delete/update exceeds max depth of {max}.";

    // Definitions.
    ER_KEY_COLUMN_DOES_NOT_EXITS = 1072, "42000", fn no_key_column(column) => "Key column '{column}' doesn't exist in table";
    ER_KEY_DOES_NOT_EXITS = 1176, "42000", fn no_key(key, table) => "Key '{key}' doesn't exist in table '{table}'";
    ER_TOO_BIG_DISPLAYWIDTH = 1439, "42000", fn display_width(max) => "Display width out of range (max = {max})";
    ER_TOO_BIG_FIELDLENGTH = 1074, "42000", fn column_length(kind, max) => "Column length too big for {kind} (max = {max}); use BLOB or TEXT instead";
    ER_TOO_BIG_PRECISION = 1426, "42000", fn precision(p, max) => "Too-big precision {p} specified. Maximum is {max}.";
    ER_TOO_BIG_SCALE = 1425, "42000", fn scale(s, max) => "Too big scale {s} specified. Maximum is {max}.";
    ER_M_BIGGER_THAN_D = 1427, "42000", fn m_bigger_than_d(p, s) => "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (precision {p}, scale {s})";
    ER_WRONG_FIELD_SPEC = 1063, "42000", fn column_specifier(column) => "Incorrect column specifier for column '{column}'";
    ER_INVALID_DEFAULT = 1067, "42000", fn invalid_default(column) => "Invalid default value for '{column}'";
    /// Two ENUM or SET members equal under the column's collation.
    ER_DUPLICATED_VALUE_IN_TYPE = 1291, "HY000", fn duplicated_member(column, value, kind) => "Column '{column}' has duplicated value '{value}' in {kind}";
    /// A SET member containing a comma.
    ER_ILLEGAL_VALUE_FOR_TYPE = 1367, "22007", fn illegal_member(kind, value) => "Illegal {kind} '{value}' value found during parsing";
    /// More than 65,535 ENUM or 64 SET members.
    ER_TOO_BIG_ENUM = 1097, "HY000", fn too_many_members(column, kind) => "Too many strings for column {column} and {kind}";
    ER_TABLE_MUST_HAVE_COLUMNS = 1113, "42000", fn no_columns() => "A table must have at least 1 column";
    ER_DUP_FIELDNAME = 1060, "42S21", fn duplicate_column(column) => "Duplicate column name '{column}'";
    ER_MULTIPLE_PRI_KEY = 1068, "42000", fn multiple_primary_keys() => "Multiple primary key defined";
    ER_WRONG_AUTO_KEY = 1075, "42000", fn wrong_auto_key() => "Incorrect table definition; there can be only one auto column and it must be defined as a key";
    ER_DUP_KEYNAME = 1061, "42000", fn duplicate_key_name(name) => "Duplicate key name '{name}'";
    ER_CANT_DROP_FIELD_OR_KEY = 1091, "42000", fn cant_drop(name) => "Can't DROP '{name}'; check that column/key exists";
    ER_CANT_DROP_FOREIGN_KEY = 1091, "42000", fn cant_drop_foreign_key(name) => "Can't DROP FOREIGN KEY `{name}`; check that it exists";
    ER_CANT_DROP_CONSTRAINT = 1091, "42000", fn cant_drop_constraint(name) => "Can't DROP CONSTRAINT `{name}`; check that it exists";
    ER_DUP_CONSTRAINT_NAME = 1826, "HY000", fn dup_constraint_name(kind, name) => "Duplicate {kind} constraint name '{name}'";
    /// MariaDB's ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED, as CHECK uses it.
    ER_CHECK_FUNCTION_NOT_ALLOWED = 1901, "HY000", fn check_function(what, name) => "Function or expression '{what}' cannot be used in the CHECK clause of `{name}`";
    ER_SUBQUERIES_NOT_SUPPORTED = 1970, "42000", fn check_subquery() => "CHECK does not support subqueries or stored functions";
    ER_TOO_MANY_FIELDS = 1117, "HY000", fn too_many_columns(detail) => "{detail}";
    ER_TOO_MANY_KEYS = 1069, "42000", fn too_many_keys(detail) => "{detail}";
    ER_TOO_MANY_KEY_PARTS = 1070, "42000", fn too_many_key_parts(detail) => "{detail}";
    ER_TOO_LONG_IDENT = 1059, "42000", fn identifier_too_long(detail) => "{detail}";
    /// `errno` 150: the foreign key is incorrectly formed; 121: its name is taken.
    ER_CANT_CREATE_TABLE = 1005, "HY000", fn cant_create_table(db, table, errno, why) => "Can't create table `{db}`.`{table}` (errno: {errno} \"{why}\")";
    ER_DROP_INDEX_FK = 1553, "HY000", fn drop_index_fk(index) => "Cannot drop index '{index}': needed in a foreign key constraint";
    ER_CANT_REMOVE_ALL_FIELDS = 1090, "42000", fn cant_remove_all_columns() => "You can't delete all columns with ALTER TABLE; use DROP TABLE instead";
    /// A column another table's foreign key references (`table`: `db`.`t`).
    ER_FK_COLUMN_CANNOT_DROP_CHILD = 1829, "HY000", fn fk_column_drop_child(column, constraint, table) => "Cannot drop column '{column}': needed in a foreign key constraint '{constraint}' of table {table}";
    ER_FK_COLUMN_CANNOT_CHANGE = 1832, "HY000", fn fk_column_change(column, constraint) => "Cannot change column '{column}': used in a foreign key constraint '{constraint}'";
    ER_FK_COLUMN_CANNOT_CHANGE_CHILD = 1833, "HY000", fn fk_column_change_child(column, constraint, table) => "Cannot change column '{column}': used in a foreign key constraint '{constraint}' of table '{table}'";
    /// A table ALTER TABLE replaced while the statement or transaction used it.
    ER_TABLE_DEF_CHANGED = 1412, "HY000", fn table_def_changed() => "Table definition has changed, please retry transaction";
    /// 1412 for a consistent read whose read view is older than the index ids it would
    /// read (a table created, rebuilt or truncated, or an index filled, after it): the
    /// transaction must start again, re-running the statement would not help.
    ER_TABLE_DEF_CHANGED_FOR_VIEW = 1412, "HY000", fn read_view_too_old() => "Table definition has changed, please retry transaction (the table is newer than this transaction's read view)";
    ER_ALTER_OPERATION_NOT_SUPPORTED_REASON = 1846, "0A000", fn alter_not_supported(op, reason, alt) => "{op} is not supported. Reason: {reason}. Try {alt}.";
    /// RENAME TABLE into a database that does not exist.
    ER_ERROR_ON_RENAME = 1025, "HY000", fn error_on_rename(from, to) => "Error on rename of '{from}' to '{to}' (errno: 168 \"Unknown (generic) error from engine\")";
    ER_TRUNCATE_ILLEGAL_FK = 1701, "42000", fn truncate_referenced(constraint) => "Cannot truncate a table referenced in a foreign key constraint ({constraint})";

    // Transactions, sessions, limits.
    ER_LOCK_WAIT_TIMEOUT = 1205, "HY000", fn lock_wait_timeout() => "Lock wait timeout exceeded; try restarting transaction";
    ER_LOCK_DEADLOCK = 1213, "40001", fn deadlock() => "Deadlock found when trying to get lock; try restarting transaction";
    ER_SP_DOES_NOT_EXIST_SAVEPOINT = 1305, "42000", fn unknown_savepoint(name) => "SAVEPOINT {name} does not exist";
    ER_LOCK_NOWAIT = 3572, "HY000", fn lock_nowait() => "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.";
    /// A transaction over one of its limits (`what`: which, and how big).
    ER_LOCK_TABLE_FULL = 1206, "HY000", fn txn_too_big(what) => "{what}: commit in smaller transactions, raise the limit, or SET rocksdb_commit_in_the_middle=ON";
    ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION = 1792, "25006", fn read_only_transaction() => "Cannot execute statement in a READ ONLY transaction.";
    ER_OPTION_PREVENTS_STATEMENT = 1290, "HY000", fn read_only_server() => "The MySQL server is running with the --read-only option so it cannot execute this statement";
    /// BACKUP DATABASE TO a directory that exists and is not empty (MySQL's SELECT ... INTO OUTFILE error).
    ER_FILE_EXISTS_ERROR = 1086, "HY000", fn file_exists(file) => "File '{file}' already exists";
    /// LOAD DATA INFILE of a file outside secure_file_priv (or with it NULL).
    ER_OPTION_PREVENTS_STATEMENT_FILE = 1290, "HY000", fn secure_file_priv() => "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement";
    /// LOAD DATA of a file the server cannot open (`errno`: the OS error number, `what`: its text), as MariaDB.
    ER_CANT_GET_STAT = 13, "HY000", fn cant_get_stat(file, errno, what) => "Can't get stat of '{file}' (Errcode: {errno} \"{what}\")";
    /// LOAD DATA LOCAL with local_infile off, or a client that cannot send files (MariaDB's).
    ER_LOAD_INFILE_CAPABILITY_DISABLED = 4166, "HY000", fn local_infile_disabled() => "The used command is not allowed because the MariaDB server or client has disabled the local infile capability";
    /// LOAD DATA: a line with fewer fields than columns (a warning, an error in strict mode).
    ER_WARN_TOO_FEW_RECORDS = 1261, "01000", fn too_few_records(row) => "Row {row} doesn't contain data for all columns";
    /// LOAD DATA: a line with more fields than columns.
    ER_WARN_TOO_MANY_RECORDS = 1262, "01000", fn too_many_records(row) => "Row {row} was truncated; it contained more data than there were input columns";
    /// LOAD DATA: FIELDS ENCLOSED BY / ESCAPED BY of more than one character.
    ER_WRONG_FIELD_TERMINATORS = 1083, "42000", fn wrong_field_terminators() => "Field separator argument is not what is expected; check the manual";
    /// strata_bulk_load: a primary key not above the previous one (MariaDB's text).
    ER_KEYS_OUT_OF_ORDER = 4054, "HY000", fn keys_out_of_order() => "Keys are out order during bulk load";
    ER_CANT_CHANGE_TX_CHARACTERISTICS = 1568, "25001", fn in_transaction() => "Transaction characteristics can't be changed while a transaction is in progress";
    ER_QUERY_TIMEOUT = 3024, "HY000", fn execution_time_exceeded() => "Query execution was interrupted, maximum statement execution time exceeded";
    ER_MAX_PREPARED_STMT_COUNT_REACHED = 1461, "42000", fn too_many_prepared(max) => "Can't create more than max_prepared_stmt_count statements (current value: {max})";
    ER_UNSUPPORTED_PS = 1295, "HY000", fn unsupported_ps() => "This command is not supported in the prepared statement protocol yet";
    ER_UNKNOWN_STMT_HANDLER = 1243, "HY000", fn unknown_statement(id, by) => "Unknown prepared statement handler ({id}) given to {by}";
    ER_CON_COUNT_ERROR = 1040, "08004", fn too_many_connections() => "Too many connections";
    ER_MALFORMED_PACKET = 1835, "08S01", fn malformed_packet(what) => "Malformed communication packet: {what}";
    ER_UNKNOWN_COM_ERROR = 1047, "08S01", fn unknown_command(what) => "Unknown command{what}";
    /// LOAD DATA: a line (e.g. an enclosed field never closed) longer than max_allowed_packet.
    ER_NET_PACKET_TOO_LARGE_LOAD = 1153, "08S01", fn load_line_too_large(max) => "Got a packet bigger than 'max_allowed_packet' bytes (a LOAD DATA line longer than {max} bytes)";
    ER_NET_PACKET_TOO_LARGE = 1153, "08S01", fn long_data_too_large() => "Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes";
    ER_NO_SUCH_THREAD = 1094, "HY000", fn no_such_thread(id) => "Unknown thread id: {id}";
    ER_NO_SUCH_QUERY = 1957, "HY000", fn no_such_query(id) => "Unknown query id: {id}";
    ER_KILL_DENIED_ERROR = 1095, "HY000", fn kill_denied(id) => "You are not owner of thread {id}";
    /// KILL QUERY (or a client gone away) stopped the statement.
    ER_QUERY_INTERRUPTED = 1317, "70100", fn query_interrupted() => "Query execution was interrupted";
    /// KILL CONNECTION stopped the statement (the connection closes).
    ER_CONNECTION_KILLED = 1927, "70100", fn connection_killed() => "Connection was killed";
    /// MariaDB's max_statement_time passed.
    ER_STATEMENT_TIMEOUT = 1969, "70100", fn statement_timeout() => "Query execution was interrupted (max_statement_time exceeded)";
    CR_SERVER_LOST = 2013, "HY000", fn connection_lost(why) => "lost connection: {why}";

    // Views and recursive common table expressions.
    ER_VIEW_WRONG_LIST = 1353, "HY000", fn view_wrong_list() => "View's SELECT and view's field list have different column counts";
    ER_VIEW_INVALID = 1356, "HY000", fn view_invalid(db, view) => "View '{db}.{view}' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them";
    ER_NO_SUCH_USER = 1449, "HY000", fn no_such_definer(user, host) => "The user specified as a definer ('{user}'@'{host}') does not exist";
    ER_VIEW_SELECT_VARIABLE = 1351, "HY000", fn view_variable() => "View's SELECT contains a variable or parameter";
    ER_TOO_MANY_TABLES = 1116, "HY000", fn too_many_tables(max) => "Too many tables; MariaDB can only use {max} tables in a join";
    ER_TOO_MANY_TABLES_VIEWS = 1116, "HY000", fn too_many_view_tables(max) => "Too many tables; the views read expand to more than {max} table references";
    ER_VIEW_RECURSIVE = 1462, "HY000", fn view_recursive(db, view) => "`{db}`.`{view}` contains view recursion";
    ER_WRONG_OBJECT = 1347, "HY000", fn wrong_object(db, name, kind) => "'{db}.{name}' is not of type '{kind}'";
    ER_NON_INSERTABLE_TABLE = 1471, "HY000", fn not_insertable(name, verb) => "The target table {name} of the {verb} is not insertable-into";
    ER_NONUPDATEABLE_COLUMN = 1348, "HY000", fn column_not_updatable(col) => "Column '{col}' is not updatable";
    ER_VIEW_NONUPD_CHECK = 1368, "HY000", fn check_option_not_updatable(db, view) => "CHECK OPTION on non-updatable view `{db}`.`{view}`";
    ER_VIEW_CHECK_FAILED = 1369, "44000", fn check_option_failed(db, view) => "CHECK OPTION failed `{db}`.`{view}`";
    /// DROP TABLE of a view (MariaDB's code; MySQL answers 1051).
    ER_IT_IS_A_VIEW = 1965, "42S02", fn is_a_view(name) => "'{name}' is a view";
    /// DROP VIEW of a name that is no view (MariaDB's code; MySQL answers 1051/1347).
    ER_UNKNOWN_VIEW = 4092, "42S02", fn unknown_view(names) => "Unknown VIEW: '{names}'";
    ER_WITH_COL_WRONG_LIST = 4002, "HY000", fn cte_wrong_list() => "WITH column list and SELECT field list have different column counts";
    ER_RECURSIVE_WITHOUT_ANCHORS = 4005, "HY000", fn cte_no_anchor(name) => "No anchors for recursive WITH element '{name}'";
    ER_NOT_STANDARD_COMPLIANT_RECURSIVE = 4008, "HY000", fn cte_restricted(name) => "Restrictions imposed on recursive definitions are violated for table '{name}'";
    /// MySQL's bound on a recursive CTE's iterations (MariaDB's max_recursive_iterations only warns; Strata fails at either).
    ER_CTE_MAX_RECURSION_DEPTH = 3636, "HY000", fn cte_max_depth(n, var) => "Recursive query aborted after {n} iterations. Try increasing @@{var} to a larger value.";

    // The engine.
    ER_ILLEGAL_HA = 1031, "HY000", fn illegal_ha(db, table) => "Storage engine STRATA of the table `{db}`.`{table}` doesn't have this option";
    ER_GET_ERRNO = 1030, "HY000", fn engine(what) => "Got error from storage engine: {what}";
    /// A warning of DROP TABLE of a table whose definition could not be read.
    WARN_UNREADABLE_DATA_LEFT = 1030, "HY000", fn unreadable_data_left(db, table) => "Got error from storage engine: the definition of `{db}`.`{table}` could not be read, so its rows stay on disk (their index ids are unknown)";
    ER_DISK_FULL = 1021, "HY000", fn disk_full(what) => "Disk full: {what}";
    ER_OPEN_AS_READONLY = 1036, "HY000", fn engine_read_only(what) => "Storage engine is read only after a write error: {what}";
}

impl SqlError {
    /// An error with a code, SQLSTATE and message: only through the table above.
    fn new(code: u16, state: &'static str, msg: impl Into<String>) -> SqlError {
        SqlError {
            code,
            state,
            msg: msg.into(),
        }
    }
    /// True for errors after which MySQL rolls back the whole transaction
    /// (deadlock).
    pub fn rolls_back_transaction(&self) -> bool {
        self.code == ER_LOCK_DEADLOCK
    }
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, self.state, self.msg)
    }
}

impl std::error::Error for SqlError {}

impl From<txn::Error> for SqlError {
    fn from(e: txn::Error) -> Self {
        match e {
            txn::Error::LockWaitTimeout => SqlError::lock_wait_timeout(),
            txn::Error::Deadlock => SqlError::deadlock(),
            txn::Error::Interrupted => SqlError::query_interrupted(),
            txn::Error::Engine(e) => lsm_error(e),
            #[allow(unreachable_patterns)]
            other => SqlError::internal(other.to_string()),
        }
    }
}

fn lsm_error(e: lsm::Error) -> SqlError {
    match e {
        lsm::Error::NoSpace(m) => SqlError::disk_full(m),
        lsm::Error::ReadOnly(m) => SqlError::engine_read_only(m),
        lsm::Error::Corruption { file, offset, what } => {
            SqlError::engine(format!("corruption in {file} at offset {offset}: {what}"))
        }
        other => SqlError::engine(other),
    }
}

impl From<lsm::Error> for SqlError {
    fn from(e: lsm::Error) -> Self {
        lsm_error(e)
    }
}

impl From<rel::Error> for SqlError {
    fn from(e: rel::Error) -> Self {
        use rel::Error as E;
        match e {
            E::Engine(e) => lsm_error(e),
            E::Txn(t) => t.into(),
            E::DupKey(k, ix) => SqlError::dup_entry(k, ix),
            E::NoSuchDb(d) => SqlError::bad_db(d),
            E::NoSuchTable(t) => SqlError::no_table(t),
            E::DbExists(d) => SqlError::db_exists(d),
            E::TableExists(t) => SqlError::table_exists(t),
            E::Limit(l) => {
                use rel::schema::Limit as L;
                match l {
                    L::Columns => SqlError::too_many_columns(&l),
                    L::Indexes => SqlError::too_many_keys(&l),
                    L::KeyParts => SqlError::too_many_key_parts(&l),
                    L::Checks => SqlError::too_many_keys(&l),
                    L::Identifier(_) => SqlError::identifier_too_long(&l),
                    L::DbName(n) => SqlError::wrong_db_name(n),
                    L::TableName(n) => SqlError::wrong_table_name(n),
                    L::ColumnName(n) => SqlError::wrong_column_name(n),
                    L::IndexName(n) => SqlError::wrong_index_name(n),
                }
            }
            E::Unreadable(t, why) => SqlError::engine(format!(
                "the definition of table {t} cannot be read ({why})"
            )),
            E::Corruption(m) => SqlError::engine(format!("corruption: {m}")),
            E::Internal(m) => SqlError::internal(m),
            E::NoParent(c) => SqlError::no_referenced_row(c),
            E::RowReferenced(c) => SqlError::row_is_referenced(c),
            E::FkDepth(n) => SqlError::fk_depth(n),
            E::TableChanged(_) => SqlError::table_def_changed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        let mut names = std::collections::HashSet::new();
        for (code, state, name, msg) in ERRORS {
            assert!(names.insert(name), "{name} twice");
            assert_eq!(state.len(), 5, "{name}: SQLSTATE {state}");
            // MySQL's codes, MariaDB's own from 4000 (4025 ER_CONSTRAINT_FAILED), and
            // the few global (EE_, below 1000) errors MariaDB sends: 13 ER_CANT_GET_STAT.
            assert!((1..5000).contains(code), "{name}: {code}");
            assert!(!msg.is_empty());
        }
        let e = SqlError::dup_entry("7", "PRIMARY");
        assert_eq!((e.code, e.state), (1062, "23000"));
        assert_eq!(e.msg, "Duplicate entry '7' for key 'PRIMARY'");
    }
}
