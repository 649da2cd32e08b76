//! Protocol constants: capability flags, server status flags, column flags, command
//! bytes, charset ids, a few error codes, and the [`ColumnType`] enum.

/// Capability flags (`CLIENT_*`), negotiated as client & server during the handshake.
pub mod cap {
    pub const CLIENT_LONG_PASSWORD: u32 = 1;
    pub const CLIENT_FOUND_ROWS: u32 = 1 << 1;
    pub const CLIENT_LONG_FLAG: u32 = 1 << 2;
    pub const CLIENT_CONNECT_WITH_DB: u32 = 1 << 3;
    pub const CLIENT_NO_SCHEMA: u32 = 1 << 4;
    pub const CLIENT_COMPRESS: u32 = 1 << 5;
    pub const CLIENT_ODBC: u32 = 1 << 6;
    pub const CLIENT_LOCAL_FILES: u32 = 1 << 7;
    pub const CLIENT_IGNORE_SPACE: u32 = 1 << 8;
    pub const CLIENT_PROTOCOL_41: u32 = 1 << 9;
    pub const CLIENT_INTERACTIVE: u32 = 1 << 10;
    pub const CLIENT_SSL: u32 = 1 << 11;
    pub const CLIENT_IGNORE_SIGPIPE: u32 = 1 << 12;
    pub const CLIENT_TRANSACTIONS: u32 = 1 << 13;
    pub const CLIENT_RESERVED: u32 = 1 << 14;
    pub const CLIENT_SECURE_CONNECTION: u32 = 1 << 15;
    pub const CLIENT_MULTI_STATEMENTS: u32 = 1 << 16;
    pub const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
    pub const CLIENT_PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
    pub const CLIENT_CONNECT_ATTRS: u32 = 1 << 20;
    pub const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS: u32 = 1 << 22;
    pub const CLIENT_SESSION_TRACK: u32 = 1 << 23;
    pub const CLIENT_DEPRECATE_EOF: u32 = 1 << 24;
    pub const CLIENT_OPTIONAL_RESULTSET_METADATA: u32 = 1 << 25;
    pub const CLIENT_QUERY_ATTRIBUTES: u32 = 1 << 27;
    pub const CLIENT_MULTI_FACTOR_AUTH: u32 = 1 << 28;

    /// What a new [`crate::Conn`] advertises (no SSL, no compression, no session
    /// tracking, no multi-statements; add the latter with `Conn::set_capability`).
    pub const DEFAULT_SERVER: u32 = CLIENT_LONG_PASSWORD
        | CLIENT_FOUND_ROWS
        | CLIENT_LOCAL_FILES
        | CLIENT_LONG_FLAG
        | CLIENT_CONNECT_WITH_DB
        | CLIENT_NO_SCHEMA
        | CLIENT_IGNORE_SPACE
        | CLIENT_PROTOCOL_41
        | CLIENT_INTERACTIVE
        | CLIENT_IGNORE_SIGPIPE
        | CLIENT_TRANSACTIONS
        | CLIENT_SECURE_CONNECTION
        | CLIENT_MULTI_RESULTS
        | CLIENT_PS_MULTI_RESULTS
        | CLIENT_PLUGIN_AUTH
        | CLIENT_CONNECT_ATTRS
        | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CLIENT_DEPRECATE_EOF;

    /// Flags a server may not advertise because this crate cannot honour them.
    pub const UNSUPPORTED: u32 = CLIENT_SSL
        | CLIENT_COMPRESS
        | CLIENT_OPTIONAL_RESULTSET_METADATA
        | CLIENT_QUERY_ATTRIBUTES
        | CLIENT_MULTI_FACTOR_AUTH
        | CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS;
}

/// Server status flags (`SERVER_STATUS_*`) carried by OK and EOF packets.
pub mod status {
    pub const SERVER_STATUS_IN_TRANS: u16 = 1;
    pub const SERVER_STATUS_AUTOCOMMIT: u16 = 2;
    pub const SERVER_MORE_RESULTS_EXISTS: u16 = 8;
    pub const SERVER_QUERY_NO_GOOD_INDEX_USED: u16 = 16;
    pub const SERVER_QUERY_NO_INDEX_USED: u16 = 32;
    pub const SERVER_STATUS_CURSOR_EXISTS: u16 = 64;
    pub const SERVER_STATUS_LAST_ROW_SENT: u16 = 128;
    pub const SERVER_STATUS_DB_DROPPED: u16 = 256;
    pub const SERVER_STATUS_NO_BACKSLASH_ESCAPES: u16 = 512;
    pub const SERVER_STATUS_METADATA_CHANGED: u16 = 1024;
    pub const SERVER_QUERY_WAS_SLOW: u16 = 2048;
    pub const SERVER_PS_OUT_PARAMS: u16 = 4096;
    pub const SERVER_STATUS_IN_TRANS_READONLY: u16 = 8192;
    pub const SERVER_SESSION_STATE_CHANGED: u16 = 16384;
}

/// Column definition flags.
pub mod colflag {
    pub const NOT_NULL_FLAG: u16 = 1;
    pub const PRI_KEY_FLAG: u16 = 2;
    pub const UNIQUE_KEY_FLAG: u16 = 4;
    pub const MULTIPLE_KEY_FLAG: u16 = 8;
    pub const BLOB_FLAG: u16 = 16;
    pub const UNSIGNED_FLAG: u16 = 32;
    pub const ZEROFILL_FLAG: u16 = 64;
    pub const BINARY_FLAG: u16 = 128;
    pub const ENUM_FLAG: u16 = 256;
    pub const AUTO_INCREMENT_FLAG: u16 = 512;
    pub const TIMESTAMP_FLAG: u16 = 1024;
    pub const SET_FLAG: u16 = 2048;
    pub const NO_DEFAULT_VALUE_FLAG: u16 = 4096;
    pub const ON_UPDATE_NOW_FLAG: u16 = 8192;
    pub const PART_KEY_FLAG: u16 = 16384;
    pub const NUM_FLAG: u16 = 32768;
}

/// Collation ids as sent in the handshake and column definitions.
pub mod charset {
    pub const LATIN1_SWEDISH_CI: u8 = 8;
    pub const UTF8MB3_GENERAL_CI: u8 = 33;
    pub const UTF8MB4_GENERAL_CI: u8 = 45;
    pub const UTF8MB4_BIN: u8 = 46;
    pub const BINARY: u8 = 63;
    pub const UTF8MB4_0900_AI_CI: u8 = 255;
}

/// Command bytes (first byte of a command packet).
pub mod com {
    pub const SLEEP: u8 = 0x00;
    pub const QUIT: u8 = 0x01;
    pub const INIT_DB: u8 = 0x02;
    pub const QUERY: u8 = 0x03;
    pub const FIELD_LIST: u8 = 0x04;
    pub const CREATE_DB: u8 = 0x05;
    pub const DROP_DB: u8 = 0x06;
    pub const REFRESH: u8 = 0x07;
    pub const SHUTDOWN: u8 = 0x08;
    pub const STATISTICS: u8 = 0x09;
    pub const PROCESS_INFO: u8 = 0x0A;
    pub const CONNECT: u8 = 0x0B;
    pub const PROCESS_KILL: u8 = 0x0C;
    pub const DEBUG: u8 = 0x0D;
    pub const PING: u8 = 0x0E;
    pub const TIME: u8 = 0x0F;
    pub const DELAYED_INSERT: u8 = 0x10;
    pub const CHANGE_USER: u8 = 0x11;
    pub const BINLOG_DUMP: u8 = 0x12;
    pub const REGISTER_SLAVE: u8 = 0x15;
    pub const BINLOG_DUMP_GTID: u8 = 0x1E;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_RESET: u8 = 0x1A;
    pub const SET_OPTION: u8 = 0x1B;
    pub const STMT_FETCH: u8 = 0x1C;
    pub const RESET_CONNECTION: u8 = 0x1F;
}

/// Error codes this crate sends itself, plus the common ones a server needs.
pub mod errcode {
    pub const ER_CON_COUNT_ERROR: u16 = 1040;
    pub const ER_HANDSHAKE_ERROR: u16 = 1043;
    pub const ER_ACCESS_DENIED_ERROR: u16 = 1045;
    pub const ER_UNKNOWN_COM_ERROR: u16 = 1047;
    pub const ER_BAD_DB_ERROR: u16 = 1049;
    pub const ER_PARSE_ERROR: u16 = 1064;
    pub const ER_NET_PACKET_TOO_LARGE: u16 = 1153;
    pub const ER_NET_READ_ERROR: u16 = 1158;
    pub const ER_UNKNOWN_STMT_HANDLER: u16 = 1243;
    pub const ER_NOT_SUPPORTED_AUTH_MODE: u16 = 1251;
}

/// Column (and binary parameter) types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ColumnType {
    Decimal = 0,
    Tiny = 1,
    Short = 2,
    Long = 3,
    Float = 4,
    Double = 5,
    Null = 6,
    Timestamp = 7,
    LongLong = 8,
    Int24 = 9,
    Date = 10,
    Time = 11,
    DateTime = 12,
    Year = 13,
    NewDate = 14,
    VarChar = 15,
    Bit = 16,
    Json = 245,
    NewDecimal = 246,
    Enum = 247,
    Set = 248,
    TinyBlob = 249,
    MediumBlob = 250,
    LongBlob = 251,
    Blob = 252,
    VarString = 253,
    String = 254,
    Geometry = 255,
}

impl ColumnType {
    /// Maps a type byte from the wire; `None` for bytes no client may send.
    pub fn from_u8(b: u8) -> Option<ColumnType> {
        use ColumnType::*;
        Some(match b {
            0 => Decimal,
            1 => Tiny,
            2 => Short,
            3 => Long,
            4 => Float,
            5 => Double,
            6 => Null,
            7 => Timestamp,
            8 => LongLong,
            9 => Int24,
            10 => Date,
            11 => Time,
            12 => DateTime,
            13 => Year,
            14 => NewDate,
            15 => VarChar,
            16 => Bit,
            245 => Json,
            246 => NewDecimal,
            247 => Enum,
            248 => Set,
            249 => TinyBlob,
            250 => MediumBlob,
            251 => LongBlob,
            252 => Blob,
            253 => VarString,
            254 => String,
            255 => Geometry,
            _ => return None,
        })
    }

    /// Width in bytes of a fixed-width binary value of this type (ints and floats).
    pub fn fixed_width(self) -> Option<usize> {
        use ColumnType::*;
        match self {
            Tiny => Some(1),
            Short | Year => Some(2),
            Long | Int24 | Float => Some(4),
            LongLong | Double => Some(8),
            _ => None,
        }
    }
}
