package io.lakeprune.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import lakeprune.v1.Predicate;
import lakeprune.v1.PruningServiceOuterClass.Column;
import lakeprune.v1.PruningServiceOuterClass.ColumnType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * lakeprune's types and values as Spark's: a column type as its Spark type (every lakeprune type
 * has one), and a typed wire value as the internal value Spark keeps in a row of that type (a
 * partition directory's values). Values arrive typed by the sidecar; nothing here parses text.
 */
final class SparkValues {
    private SparkValues() {}

    /** A table column as a Spark field; nullable, as Spark's Parquet reader reads every column. */
    static StructField field(Column column) {
        return new StructField(column.getName(), type(column.getType()), true, Metadata.empty());
    }

    static DataType type(ColumnType type) {
        return switch (type.getKind()) {
            case TYPE_KIND_BOOLEAN -> DataTypes.BooleanType;
            case TYPE_KIND_TINYINT -> DataTypes.ByteType;
            case TYPE_KIND_SMALLINT -> DataTypes.ShortType;
            case TYPE_KIND_INT -> DataTypes.IntegerType;
            case TYPE_KIND_BIGINT -> DataTypes.LongType;
            case TYPE_KIND_FLOAT -> DataTypes.FloatType;
            case TYPE_KIND_DOUBLE -> DataTypes.DoubleType;
            case TYPE_KIND_DECIMAL -> DataTypes.createDecimalType(type.getPrecision(), type.getScale());
            case TYPE_KIND_STRING -> DataTypes.StringType;
            case TYPE_KIND_BINARY -> DataTypes.BinaryType;
            case TYPE_KIND_DATE -> DataTypes.DateType;
            case TYPE_KIND_TIMESTAMP -> DataTypes.TimestampType;
            case TYPE_KIND_UNSPECIFIED, UNRECOGNIZED -> throw new IllegalStateException(
                    "lakeprune: column type " + type.getName() + " has no Spark type");
        };
    }

    /** The internal value of {@code value} in a row of {@code type}; null for NULL (no field set). */
    static Object internal(String column, DataType type, Predicate.Value value) {
        switch (value.getKindCase()) {
            case KIND_NOT_SET:
                return null;
            case BOOLEAN_VALUE:
                if (type == DataTypes.BooleanType) {
                    return value.getBooleanValue();
                }
                break;
            case INTEGER_VALUE:
                long number = value.getIntegerValue();
                if (type == DataTypes.LongType) {
                    return number;
                }
                if (type == DataTypes.IntegerType && number == (int) number) {
                    return (int) number;
                }
                if (type == DataTypes.ShortType && number == (short) number) {
                    return (short) number;
                }
                if (type == DataTypes.ByteType && number == (byte) number) {
                    return (byte) number;
                }
                break;
            case DOUBLE_VALUE:
            case FLOAT_VALUE:
                double real = value.hasDoubleValue() ? value.getDoubleValue() : value.getFloatValue();
                if (type == DataTypes.DoubleType) {
                    return real;
                }
                if (type == DataTypes.FloatType && ((float) real == real || Double.isNaN(real))) {
                    return (float) real;
                }
                break;
            case DECIMAL_VALUE:
                if (type instanceof DecimalType decimal) {
                    BigDecimal exact = new BigDecimal(new BigInteger(value.getDecimalValue().getUnscaled()), value.getDecimalValue().getScale());
                    try {
                        BigDecimal scaled = exact.setScale(decimal.scale(), RoundingMode.UNNECESSARY);
                        if (scaled.precision() - scaled.scale() <= decimal.precision() - decimal.scale()) {
                            return Decimal.apply(scaled);
                        }
                    } catch (ArithmeticException e) {
                        // more fractional digits than the column: not a value of it
                    }
                }
                break;
            case STRING_VALUE:
                if (type == DataTypes.StringType) {
                    return UTF8String.fromString(value.getStringValue());
                }
                break;
            case BINARY_VALUE:
                if (type == DataTypes.BinaryType) {
                    return value.getBinaryValue().toByteArray();
                }
                break;
            case DATE_DAYS:
                if (type == DataTypes.DateType) {
                    return value.getDateDays();
                }
                break;
            case TIMESTAMP_MICROS:
                if (type == DataTypes.TimestampType) {
                    return value.getTimestampMicros();
                }
                break;
        }
        throw new IllegalStateException("lakeprune: partition value " + value.getKindCase() + " of column " + column
                + " does not fit its Spark type " + type.simpleString());
    }
}
