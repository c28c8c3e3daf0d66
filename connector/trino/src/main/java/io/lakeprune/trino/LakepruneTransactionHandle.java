package io.lakeprune.trino;

import io.trino.spi.connector.ConnectorTransactionHandle;

/** lakeprune is read-only: one transaction handle serves every query. */
public enum LakepruneTransactionHandle
        implements ConnectorTransactionHandle
{
    INSTANCE
}
