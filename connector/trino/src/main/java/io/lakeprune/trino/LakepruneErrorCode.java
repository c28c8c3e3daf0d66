package io.lakeprune.trino;

import io.trino.spi.ErrorCode;
import io.trino.spi.ErrorCodeSupplier;
import io.trino.spi.ErrorType;

import static io.trino.spi.ErrorType.EXTERNAL;
import static io.trino.spi.ErrorType.INTERNAL_ERROR;
import static io.trino.spi.ErrorType.USER_ERROR;

public enum LakepruneErrorCode
        implements ErrorCodeSupplier
{
    /** The sidecar could not be reached, or did not answer within the request timeout. */
    LAKEPRUNE_SIDECAR_UNAVAILABLE(0, EXTERNAL),
    /** The sidecar answered with an error of its own (storage, unreadable metadata). */
    LAKEPRUNE_SIDECAR_ERROR(1, EXTERNAL),
    /** The sidecar refused the request's content (a value that does not fit, a malformed request). */
    LAKEPRUNE_INVALID_REQUEST(2, USER_ERROR),
    /** The sidecar refused the catalog's bearer token. */
    LAKEPRUNE_UNAUTHENTICATED(3, EXTERNAL),
    /** A data file could not be read. */
    LAKEPRUNE_CANNOT_READ_FILE(4, EXTERNAL),
    /** A data file does not match the table's schema. */
    LAKEPRUNE_BAD_DATA(5, EXTERNAL),
    /** The sidecar described something this connector cannot represent. */
    LAKEPRUNE_UNSUPPORTED(6, INTERNAL_ERROR),
    /** A split names a file outside what the sidecar returned for the table. */
    LAKEPRUNE_INVALID_SPLIT(7, INTERNAL_ERROR);

    private final ErrorCode errorCode;

    LakepruneErrorCode(int code, ErrorType type)
    {
        // 0x0720_0000: a range of its own, away from Trino's built-in connectors.
        errorCode = new ErrorCode(code + 0x0720_0000, name(), type);
    }

    @Override
    public ErrorCode toErrorCode()
    {
        return errorCode;
    }
}
