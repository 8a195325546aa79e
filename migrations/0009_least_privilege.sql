-- What the writer role (consumer, jobs) may do to the partitions without owning events.cloud_event.
--
-- Creating a partition (CREATE TABLE ... PARTITION OF) and detaching one both need ownership of
-- the parent, and an owner may also drop it, alter its columns or its indexes. So the two
-- maintenance steps become SECURITY DEFINER functions owned by the role that runs the migrations:
-- the writer is granted EXECUTE on them (migrate's grants, DATABASE_WRITER_ROLE), nothing else of
-- an owner's, and new partitions belong to the owner like every other table. EXECUTE is revoked
-- from PUBLIC, so no other role (the search's reader included) can call them. search_path is
-- pinned, as a SECURITY DEFINER function must: every name below is schema-qualified.

ALTER FUNCTION events.create_month_partition(date) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION events.create_month_partition(date) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION events.create_month_partition_table(date) FROM PUBLIC;

-- Detaches (never drops) a month partition of events.cloud_event; refuses any other table (the
-- default partition included), so EXECUTE on it is not a licence to detach anything else.
CREATE FUNCTION events.detach_month_partition(p_name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF p_name !~ '^cloud_event_[0-9]{4}_[0-9]{2}$' THEN
    RAISE EXCEPTION 'not a month partition of events.cloud_event: %', p_name USING ERRCODE = '22023';
  END IF;
  EXECUTE format('ALTER TABLE events.cloud_event DETACH PARTITION events.%I', p_name);
END $$;
REVOKE EXECUTE ON FUNCTION events.detach_month_partition(text) FROM PUBLIC;
