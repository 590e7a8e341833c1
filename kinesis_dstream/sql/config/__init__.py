"""What a query was given: the three connectors' option names (option_table), their
values (option_values), the parsed options (options), the connection (clients,
credentials)."""
