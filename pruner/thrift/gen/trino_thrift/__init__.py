__all__ = ['ttypes', 'constants', 'TrinoThriftService']
