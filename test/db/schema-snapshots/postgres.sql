CREATE SCHEMA public;

COMMENT ON SCHEMA public IS 'standard public schema';

CREATE TYPE public.cooling_unit_type AS ENUM (
    'FARM_GATE_STORAGE_ROOM',
    'MARKET_STORAGE_ROOM',
    'MOVABLE_UNIT',
    'OTHER'
);

CREATE TYPE public.payment_method AS ENUM (
    'CASH',
    'CREDIT_CARD',
    'QR_CODE',
    'BANK_TRANSFER',
    'USSD',
    'OPAY',
    'UPI'
);

CREATE TYPE public.pricing_strategy AS ENUM (
    'FIXED',
    'DAILY'
);

CREATE TYPE public.specification_type AS ENUM (
    'TEMPERATURE',
    'HUMIDITY'
);

CREATE TYPE public.unit_metric AS ENUM (
    'CRATES',
    'KILOGRAMS'
);

CREATE TYPE public.user_role AS ENUM (
    'REGISTERED_EMPLOYEE',
    'OPERATOR',
    'FARMER'
);

CREATE FUNCTION public.api_token_state(revoked boolean, expires_at timestamp with time zone, at timestamp with time zone) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT CASE WHEN revoked THEN 'revoked' WHEN expires_at <= at THEN 'expired' ELSE 'active' END
$$;

CREATE FUNCTION public.check_ins_move_crates() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  UPDATE crates SET checked_in_at = NEW.checked_in_at WHERE check_in_id = NEW.id;
  RETURN NULL;
END
$$;

CREATE FUNCTION public.check_outs_move_surveys() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  UPDATE market_surveys SET cooling_unit_id = NEW.cooling_unit_id WHERE check_out_id = NEW.id;
  RETURN NULL;
END
$$;

CREATE FUNCTION public.cooling_units_announce() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM pg_notify('coldtrack_unit_directory', OLD.company_id::text);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND (TG_OP = 'INSERT' OR NEW.company_id IS DISTINCT FROM OLD.company_id) THEN
    PERFORM pg_notify('coldtrack_unit_directory', NEW.company_id::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION public.crate_stay_range(arrived timestamp with time zone, departed timestamp with time zone) RETURNS tstzrange
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT tstzrange(arrived, CASE WHEN departed IS NULL THEN NULL ELSE greatest(arrived, departed) END) $$;

CREATE FUNCTION public.crates_take_check_in_time() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  SELECT ci.checked_in_at INTO NEW.checked_in_at FROM check_ins ci WHERE ci.id = NEW.check_in_id FOR SHARE;
  -- said here, as the foreign key would say it: otherwise the empty time's NOT NULL would
  IF NOT FOUND THEN
    RAISE foreign_key_violation USING MESSAGE = format('check-in %s does not exist (crates.check_in_id)', NEW.check_in_id);
  END IF;
  RETURN NEW;
END
$$;

CREATE FUNCTION public.market_surveys_take_check_out_unit() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  SELECT co.cooling_unit_id INTO NEW.cooling_unit_id FROM check_outs co WHERE co.id = NEW.check_out_id FOR SHARE;
  -- said here, as the foreign key would say it: otherwise the empty unit's NOT NULL would
  IF NOT FOUND THEN
    RAISE foreign_key_violation USING MESSAGE = format('check-out %s does not exist (market_surveys.check_out_id)', NEW.check_out_id);
  END IF;
  RETURN NEW;
END
$$;

CREATE FUNCTION public.sensor_changes_prune(before timestamp with time zone) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
  through bigint;
  removed bigint;
BEGIN
  SELECT max(id) INTO through FROM sensor_changes WHERE landed_at < before;
  IF through IS NULL THEN RETURN 0; END IF;
  UPDATE sensor_changes_state SET pruned_through = greatest(pruned_through, through);
  DELETE FROM sensor_changes WHERE id <= through;
  GET DIAGNOSTICS removed = ROW_COUNT;
  RETURN removed;
END
$$;

CREATE FUNCTION public.sensor_changes_record(units integer[], types public.specification_type[], firsts timestamp with time zone[], lasts timestamp with time zone[], counts integer[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  LOCK TABLE sensor_changes IN SHARE ROW EXCLUSIVE MODE;
  INSERT INTO sensor_changes (cooling_unit_id, specification_type, first_at, last_at, readings)
  SELECT * FROM unnest(units, types, firsts, lasts, counts);
END
$$;

CREATE FUNCTION public.sensor_compact(at timestamp with time zone DEFAULT now(), most integer DEFAULT 3) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
  closed timestamptz;
  compacted integer := 0;
BEGIN
  -- one compactor at a time (every app process runs the upkeep); the others skip this round
  IF NOT pg_try_advisory_xact_lock(hashtext('sensor_compact')) THEN
    RETURN 0;
  END IF;
  FOR closed IN
    SELECT m FROM generate_series(date_trunc('month', at - interval '10 years', 'UTC'),
                                  date_trunc('month', at - interval '3 days', 'UTC') - interval '1 month', interval '1 month') m
    WHERE NOT EXISTS (SELECT FROM sensor_rollup_compacted c WHERE c.month = m)
      AND EXISTS (SELECT FROM sensor_rollup_daily d WHERE d.bucket >= m AND d.bucket < m + interval '1 month')
    ORDER BY m
    LIMIT most
  LOOP
    PERFORM sensor_compact_rollups(closed);
    compacted := compacted + 1;
  END LOOP;
  RETURN compacted;
END $$;

CREATE FUNCTION public.sensor_compact_rollups(from_at timestamp with time zone) RETURNS bigint
    LANGUAGE plpgsql
    SET work_mem TO '256MB'
    AS $$
DECLARE
  rewritten bigint;
BEGIN
  WITH gone AS (
    DELETE FROM sensor_rollup_hourly WHERE bucket >= from_at AND bucket < from_at + interval '1 month' RETURNING *
  )
  INSERT INTO sensor_rollup_hourly SELECT * FROM gone ORDER BY cooling_unit_id, bucket;
  GET DIAGNOSTICS rewritten = ROW_COUNT;
  WITH gone AS (
    DELETE FROM sensor_rollup_daily WHERE bucket >= from_at AND bucket < from_at + interval '1 month' RETURNING *
  )
  INSERT INTO sensor_rollup_daily SELECT * FROM gone ORDER BY cooling_unit_id, bucket;
  INSERT INTO sensor_rollup_compacted AS c (month) VALUES (from_at)
  ON CONFLICT ON CONSTRAINT sensor_rollup_compacted_pkey DO UPDATE SET compacted_at = now();
  RETURN rewritten;
END $$;

CREATE FUNCTION public.sensor_maintain(at timestamp with time zone DEFAULT now()) RETURNS integer
    LANGUAGE plpgsql
    AS $_$
DECLARE
  kept interval := (SELECT retention FROM sensor_storage);
  old record;
  dropped integer := 0;
BEGIN
  PERFORM sensor_prepare_range(at - interval '1 week', at + interval '8 weeks');
  IF kept IS NOT NULL THEN
    FOR old IN
      SELECT c.relname
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'sensor_readings'::regclass AND c.relname ~ '^sensor_readings_p\d{8}$'
        AND (to_date(substr(c.relname, 18), 'YYYYMMDD')::timestamp AT TIME ZONE 'UTC') + interval '7 days' <= at - kept
    LOOP
      EXECUTE format('ALTER TABLE sensor_readings DETACH PARTITION %I', old.relname);
      EXECUTE format('DROP TABLE %I', old.relname);
      dropped := dropped + 1;
    END LOOP;
  END IF;
  RETURN dropped;
END $_$;

CREATE FUNCTION public.sensor_prepare_range(from_at timestamp with time zone, to_at timestamp with time zone) RETURNS TABLE(target text, range_start timestamp with time zone, range_end timestamp with time zone)
    LANGUAGE plpgsql
    AS $$
DECLARE
  week timestamptz := date_trunc('week', from_at, 'UTC');
  partition text;
BEGIN
  IF to_at - from_at > interval '30 years' THEN
    RAISE EXCEPTION 'sensor_prepare_range: % .. % is not a plausible range of readings', from_at, to_at;
  END IF;
  WHILE week < to_at LOOP
    partition := 'sensor_readings_p' || to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD');
    IF to_regclass(partition) IS NULL THEN
      -- serialises creators (app processes, ingest runs); re-check once the lock is ours
      PERFORM pg_advisory_xact_lock(hashtext('sensor_readings partitions'));
      IF to_regclass(partition) IS NULL THEN
        EXECUTE format('CREATE TABLE %I (LIKE sensor_readings INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', partition);
        EXECUTE format(
          'WITH moved AS (DELETE FROM sensor_readings_default WHERE recorded_at >= %L AND recorded_at < %L RETURNING *)
           INSERT INTO %I SELECT * FROM moved', week, week + interval '7 days', partition);
        EXECUTE format('ALTER TABLE sensor_readings ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
          partition, week, week + interval '7 days');
        EXECUTE format('CREATE TRIGGER sensor_rollups_insert AFTER INSERT ON %I
          REFERENCING NEW TABLE AS new_readings FOR EACH STATEMENT EXECUTE FUNCTION sensor_rollups_add()', partition);
      END IF;
    END IF;
    target := partition;
    range_start := week;
    range_end := week + interval '7 days';
    RETURN NEXT;
    week := week + interval '7 days';
  END LOOP;
END $$;

CREATE FUNCTION public.sensor_rollups_add() RETURNS trigger
    LANGUAGE plpgsql
    SET work_mem TO '64MB'
    AS $$
BEGIN
  FOR attempt IN 1..2 LOOP
    BEGIN
      IF attempt = 2 THEN
        LOCK TABLE sensor_rollup_hourly IN SHARE ROW EXCLUSIVE MODE;
      END IF;
      WITH delta AS MATERIALIZED (
        -- date_bin: UTC hours by arithmetic, whatever the session's time zone
        SELECT date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00') AS bucket, cooling_unit_id,
          coalesce(sum(value) FILTER (WHERE specification_type = 'TEMPERATURE'), 0) AS t_sum,
          min(value) FILTER (WHERE specification_type = 'TEMPERATURE') AS t_min,
          max(value) FILTER (WHERE specification_type = 'TEMPERATURE') AS t_max,
          count(*) FILTER (WHERE specification_type = 'TEMPERATURE')::integer AS t_count,
          coalesce(sum(value) FILTER (WHERE specification_type = 'HUMIDITY'), 0) AS h_sum,
          min(value) FILTER (WHERE specification_type = 'HUMIDITY') AS h_min,
          max(value) FILTER (WHERE specification_type = 'HUMIDITY') AS h_max,
          count(*) FILTER (WHERE specification_type = 'HUMIDITY')::integer AS h_count
        FROM new_readings
        GROUP BY 1, 2
      ), grown AS (
        UPDATE sensor_rollup_hourly h SET
          t_sum = h.t_sum + x.t_sum, t_min = least(h.t_min, x.t_min), t_max = greatest(h.t_max, x.t_max),
          t_count = h.t_count + x.t_count,
          h_sum = h.h_sum + x.h_sum, h_min = least(h.h_min, x.h_min), h_max = greatest(h.h_max, x.h_max),
          h_count = h.h_count + x.h_count
        FROM delta x
        WHERE (h.cooling_unit_id, h.bucket) = (x.cooling_unit_id, x.bucket)
        RETURNING h.bucket, h.cooling_unit_id, h.t_count, h.h_count
      ), created AS (
        INSERT INTO sensor_rollup_hourly (bucket, cooling_unit_id, t_sum, t_min, t_max, t_count, h_sum, h_min, h_max, h_count)
        SELECT x.bucket, x.cooling_unit_id, x.t_sum, x.t_min, x.t_max, x.t_count, x.h_sum, x.h_min, x.h_max, x.h_count
        FROM delta x
        WHERE NOT EXISTS (SELECT FROM grown g WHERE (g.cooling_unit_id, g.bucket) = (x.cooling_unit_id, x.bucket))
      )
      INSERT INTO sensor_rollup_daily AS d
        (bucket, cooling_unit_id, t_sum, t_min, t_max, t_count, t_hours, h_sum, h_min, h_max, h_count, h_hours)
      SELECT date_bin('1 day', x.bucket, '2000-01-01 00:00:00+00'), x.cooling_unit_id,
        sum(x.t_sum), min(x.t_min), max(x.t_max), sum(x.t_count)::integer,
        count(*) FILTER (WHERE x.t_count > 0 AND (g.t_count IS NULL OR g.t_count = x.t_count))::integer,
        sum(x.h_sum), min(x.h_min), max(x.h_max), sum(x.h_count)::integer,
        count(*) FILTER (WHERE x.h_count > 0 AND (g.h_count IS NULL OR g.h_count = x.h_count))::integer
      FROM delta x LEFT JOIN grown g USING (bucket, cooling_unit_id)
      GROUP BY 1, 2
      -- index order: concurrent batches lock shared days in the same order
      ORDER BY 2, 1
      ON CONFLICT (cooling_unit_id, bucket) DO UPDATE SET
        t_sum = d.t_sum + excluded.t_sum, t_min = least(d.t_min, excluded.t_min), t_max = greatest(d.t_max, excluded.t_max),
        t_count = d.t_count + excluded.t_count, t_hours = d.t_hours + excluded.t_hours,
        h_sum = d.h_sum + excluded.h_sum, h_min = least(d.h_min, excluded.h_min), h_max = greatest(d.h_max, excluded.h_max),
        h_count = d.h_count + excluded.h_count, h_hours = d.h_hours + excluded.h_hours;
      RETURN NULL;
    EXCEPTION WHEN unique_violation THEN
      IF attempt = 2 THEN RAISE; END IF;
    END;
  END LOOP;
  RETURN NULL;
END $$;

CREATE FUNCTION public.sensor_rollups_after_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM sensor_rollups_rebuild(array_agg(cooling_unit_id), array_agg(bucket))
  FROM (SELECT DISTINCT cooling_unit_id, date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00') AS bucket FROM old_readings) k
  HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE FUNCTION public.sensor_rollups_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM sensor_rollups_rebuild(array_agg(cooling_unit_id), array_agg(bucket))
  FROM (
    SELECT cooling_unit_id, date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00') AS bucket FROM old_readings
    UNION
    SELECT cooling_unit_id, date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00') FROM new_readings
  ) k
  HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE FUNCTION public.sensor_rollups_rebuild(units integer[], hours timestamp with time zone[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  DELETE FROM sensor_rollup_hourly h
  USING unnest(units, hours) AS k (cooling_unit_id, bucket)
  WHERE (h.cooling_unit_id, h.bucket) = (k.cooling_unit_id, k.bucket);

  INSERT INTO sensor_rollup_hourly (bucket, cooling_unit_id, t_sum, t_min, t_max, t_count, h_sum, h_min, h_max, h_count)
  SELECT k.bucket, k.cooling_unit_id,
    coalesce(sum(r.value) FILTER (WHERE r.specification_type = 'TEMPERATURE'), 0),
    min(r.value) FILTER (WHERE r.specification_type = 'TEMPERATURE'),
    max(r.value) FILTER (WHERE r.specification_type = 'TEMPERATURE'),
    count(*) FILTER (WHERE r.specification_type = 'TEMPERATURE'),
    coalesce(sum(r.value) FILTER (WHERE r.specification_type = 'HUMIDITY'), 0),
    min(r.value) FILTER (WHERE r.specification_type = 'HUMIDITY'),
    max(r.value) FILTER (WHERE r.specification_type = 'HUMIDITY'),
    count(*) FILTER (WHERE r.specification_type = 'HUMIDITY')
  FROM unnest(units, hours) AS k (cooling_unit_id, bucket)
  JOIN sensor_readings r ON r.cooling_unit_id = k.cooling_unit_id
    AND r.recorded_at >= k.bucket AND r.recorded_at < k.bucket + interval '1 hour'
  GROUP BY 1, 2;

  DELETE FROM sensor_rollup_daily d
  USING unnest(units, hours) AS k (cooling_unit_id, bucket)
  WHERE (d.cooling_unit_id, d.bucket) = (k.cooling_unit_id, date_bin('1 day', k.bucket, '2000-01-01 00:00:00+00'));

  INSERT INTO sensor_rollup_daily (bucket, cooling_unit_id, t_sum, t_min, t_max, t_count, t_hours, h_sum, h_min, h_max, h_count, h_hours)
  SELECT k.bucket, k.cooling_unit_id,
    sum(h.t_sum), min(h.t_min), max(h.t_max), sum(h.t_count), count(*) FILTER (WHERE h.t_count > 0),
    sum(h.h_sum), min(h.h_min), max(h.h_max), sum(h.h_count), count(*) FILTER (WHERE h.h_count > 0)
  FROM (
    SELECT DISTINCT cooling_unit_id, date_bin('1 day', bucket, '2000-01-01 00:00:00+00') AS bucket
    FROM unnest(units, hours) AS k (cooling_unit_id, bucket)
  ) k
  JOIN sensor_rollup_hourly h ON h.cooling_unit_id = k.cooling_unit_id
    AND h.bucket >= k.bucket AND h.bucket < k.bucket + interval '1 day'
  GROUP BY 1, 2;
END $$;

CREATE FUNCTION public.sensor_rollups_truncate() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  TRUNCATE sensor_rollup_hourly, sensor_rollup_daily;
  RETURN NULL;
END $$;

CREATE FUNCTION public.sensor_serial_read() RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$SELECT true$$;

COMMENT ON FUNCTION public.sensor_serial_read() IS 'Always true. Called by a view to keep every query that reads it serial (PARALLEL UNSAFE): see migration 014.';

CREATE FUNCTION public.sensor_stale_aggregates(from_at timestamp with time zone, to_at timestamp with time zone) RETURNS TABLE(aggregate text, window_start timestamp with time zone, window_end timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$ SELECT NULL::text, NULL::timestamptz, NULL::timestamptz WHERE false $$;

CREATE FUNCTION public.sensor_timestamp_text(at timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  SELECT to_char(at AT TIME ZONE 'UTC',
    CASE WHEN date_trunc('second', at) = at THEN 'YYYY-MM-DD"T"HH24:MI:SS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END)
$$;

CREATE TABLE public.token_audit_events (
    id bigint NOT NULL,
    company_id integer NOT NULL,
    sequence bigint NOT NULL,
    occurred_at timestamp with time zone NOT NULL,
    action text NOT NULL,
    token_id uuid NOT NULL,
    related_token_id uuid,
    actor_type text NOT NULL,
    actor_id text NOT NULL,
    client_ip inet,
    user_agent text,
    request_id text,
    details jsonb DEFAULT '{}'::jsonb NOT NULL,
    prev_hash bytea,
    hash bytea NOT NULL,
    CONSTRAINT token_audit_events_action_known CHECK ((action = ANY (ARRAY['token.created'::text, 'token.rotated'::text, 'token.revoked'::text, 'token.leak_reported'::text, 'token.revoked_leaked'::text, 'webhook_endpoint.created'::text, 'webhook_endpoint.updated'::text, 'webhook_endpoint.deleted'::text, 'webhook_endpoint.secret_rotated'::text]))),
    CONSTRAINT token_audit_events_actor_id_check CHECK (((char_length(actor_id) >= 1) AND (char_length(actor_id) <= 200))),
    CONSTRAINT token_audit_events_actor_type_known CHECK ((actor_type = ANY (ARRAY['employee'::text, 'leak_reporter'::text, 'system'::text]))),
    CONSTRAINT token_audit_events_check CHECK ((related_token_id <> token_id)),
    CONSTRAINT token_audit_events_check1 CHECK (((sequence = 1) = (prev_hash IS NULL))),
    CONSTRAINT token_audit_events_check2 CHECK (((actor_type <> 'employee'::text) OR (actor_id ~ '^[1-9][0-9]{0,9}$'::text))),
    CONSTRAINT token_audit_events_details_check CHECK ((jsonb_typeof(details) = 'object'::text)),
    CONSTRAINT token_audit_events_hash_check CHECK ((octet_length(hash) = 32)),
    CONSTRAINT token_audit_events_prev_hash_check CHECK ((octet_length(prev_hash) = 32)),
    CONSTRAINT token_audit_events_request_id_check CHECK ((char_length(request_id) <= 128)),
    CONSTRAINT token_audit_events_sequence_check CHECK ((sequence > 0)),
    CONSTRAINT token_audit_events_user_agent_check CHECK ((char_length(user_agent) <= 512))
);

CREATE FUNCTION public.token_audit_event_hash(event public.token_audit_events) RETURNS bytea
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  SELECT sha256(convert_to(jsonb_build_array(
    'coldtrack.token_audit_event.v1',
    event.id, event.company_id, event.sequence,
    to_char(event.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    event.action, event.token_id, event.related_token_id,
    event.actor_type, event.actor_id,
    host(event.client_ip), event.user_agent, event.request_id,
    event.details,
    encode(event.prev_hash, 'hex')
  )::text, 'UTF8'))
$$;

CREATE FUNCTION public.token_audit_events_chain() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
  previous record;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('coldtrack.token_audit_events'), NEW.company_id);
  -- a statement of its own after the lock: its snapshot sees what the previous holder committed
  SELECT sequence, hash INTO previous FROM token_audit_events
  WHERE company_id = NEW.company_id ORDER BY sequence DESC LIMIT 1;
  NEW.sequence := coalesce(previous.sequence, 0) + 1;
  NEW.prev_hash := previous.hash;
  NEW.hash := token_audit_event_hash(NEW);
  RETURN NEW;
END
$$;

CREATE FUNCTION public.token_audit_events_refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  RAISE EXCEPTION 'token_audit_events is append-only: % is refused', TG_OP
    USING HINT = 'Audit events are never changed or removed; see docs/operations.md, "The token audit trail".';
END
$$;

CREATE TABLE public.webhook_deliveries (
    id bigint NOT NULL,
    endpoint_id uuid NOT NULL,
    event_id bigint NOT NULL,
    ordering_key text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    leased_until timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    completed_at timestamp with time zone,
    CONSTRAINT webhook_deliveries_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text])))
);

CREATE FUNCTION public.webhook_delivery_claimable(d public.webhook_deliveries, at timestamp with time zone, max_in_flight integer) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  SELECT d.status = 'pending' AND d.next_attempt_at <= at
    AND (d.leased_until IS NULL OR d.leased_until < at)
    AND (SELECT e.disabled_at IS NULL FROM webhook_endpoints e WHERE e.id = d.endpoint_id)
    AND NOT EXISTS (
      SELECT 1 FROM webhook_deliveries earlier
      WHERE earlier.endpoint_id = d.endpoint_id AND earlier.ordering_key = d.ordering_key
        AND earlier.status = 'pending' AND earlier.id < d.id)
    AND (SELECT count(*) FROM webhook_deliveries busy
         WHERE busy.endpoint_id = d.endpoint_id AND busy.status = 'pending' AND busy.leased_until >= at) < max_in_flight
$$;

CREATE FUNCTION public.webhook_endpoint_sensor_start() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  -- the feed's head, as the pages compute it (max(id) reads the primary key's last entry)
  NEW.sensor_position := coalesce((SELECT max(id) FROM sensor_changes), (SELECT pruned_through FROM sensor_changes_state));
  RETURN NEW;
END $$;

CREATE FUNCTION public.webhook_event_fan_out() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  INSERT INTO webhook_deliveries (endpoint_id, event_id, ordering_key, next_attempt_at, created_at)
  SELECT e.id, NEW.id, NEW.ordering_key, NEW.occurred_at, NEW.occurred_at
  FROM webhook_endpoints e
  WHERE e.company_id = NEW.company_id
    AND (NEW.endpoint_id = e.id OR (NEW.endpoint_id IS NULL AND e.disabled_at IS NULL AND NEW.type = ANY (e.event_types)));
  RETURN NULL;
END $$;

CREATE FUNCTION public.webhook_token_data(token_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  SELECT jsonb_build_object(
    'id', t.id, 'name', t.name, 'scopes', to_jsonb(t.scopes),
    'cooling_unit_ids', to_jsonb(ARRAY(SELECT u.cooling_unit_id FROM api_token_cooling_units u WHERE u.api_token_id = t.id ORDER BY 1)),
    'expires_at', t.expires_at, 'revoked_at', t.revoked_at, 'created_at', t.created_at, 'created_by', t.created_by)
  FROM api_tokens t WHERE t.id = token_id
$$;

CREATE FUNCTION public.webhook_token_event() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
  event_type text := CASE NEW.action
    WHEN 'token.created' THEN 'api_token.created'
    WHEN 'token.rotated' THEN 'api_token.rotated'
    WHEN 'token.revoked' THEN 'api_token.revoked'
    WHEN 'token.revoked_leaked' THEN 'api_token.leaked'
  END;
BEGIN
  IF event_type IS NULL OR NOT EXISTS (
    SELECT 1 FROM webhook_endpoints e WHERE e.company_id = NEW.company_id AND event_type = ANY (e.event_types)
  ) THEN
    RETURN NULL;
  END IF;
  INSERT INTO webhook_events (company_id, type, occurred_at, data, ordering_key)
  VALUES (
    NEW.company_id, event_type, NEW.occurred_at,
    jsonb_build_object('api_token', webhook_token_data(NEW.token_id), 'actor', jsonb_build_object('type', NEW.actor_type, 'id', NEW.actor_id))
      || CASE WHEN NEW.related_token_id IS NULL THEN '{}'::jsonb
              ELSE jsonb_build_object('replaced_by', webhook_token_data(NEW.related_token_id)) END
      || CASE WHEN NEW.details ? 'grace_period_seconds' THEN jsonb_build_object('grace_period_seconds', NEW.details -> 'grace_period_seconds') ELSE '{}'::jsonb END,
    NEW.token_id::text);
  RETURN NULL;
END $$;

CREATE TABLE public.api_token_cooling_units (
    api_token_id uuid NOT NULL,
    cooling_unit_id integer NOT NULL
);

CREATE TABLE public.api_token_last_client (
    api_token_id uuid NOT NULL,
    seen_at timestamp with time zone NOT NULL,
    ip inet,
    user_agent text,
    CONSTRAINT api_token_last_client_user_agent_check CHECK ((char_length(user_agent) <= 512))
);

CREATE TABLE public.api_token_usage (
    api_token_id uuid NOT NULL,
    day date NOT NULL,
    endpoint text NOT NULL,
    class text NOT NULL,
    requests bigint NOT NULL,
    CONSTRAINT api_token_usage_class_known CHECK ((class = ANY (ARRAY['2xx'::text, '304'::text, '4xx'::text, '429'::text, '5xx'::text]))),
    CONSTRAINT api_token_usage_endpoint_check CHECK (((char_length(endpoint) >= 1) AND (char_length(endpoint) <= 200))),
    CONSTRAINT api_token_usage_requests_check CHECK ((requests > 0))
);

CREATE TABLE public.api_token_usage_flushes (
    flush_id uuid NOT NULL,
    flushed_at timestamp with time zone NOT NULL
);

CREATE TABLE public.api_tokens (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id integer NOT NULL,
    name text NOT NULL,
    scopes text[] NOT NULL,
    token_hash bytea NOT NULL,
    expires_at timestamp with time zone,
    last_used_at timestamp with time zone,
    revoked boolean DEFAULT false NOT NULL,
    revoked_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    created_by integer NOT NULL,
    rotated_from uuid,
    allowed_ips cidr[] DEFAULT '{}'::cidr[] NOT NULL,
    CONSTRAINT api_tokens_allowed_ips_at_most_50 CHECK ((cardinality(allowed_ips) <= 50)),
    CONSTRAINT api_tokens_allowed_ips_no_nulls CHECK ((array_position(allowed_ips, NULL::cidr) IS NULL)),
    CONSTRAINT api_tokens_check CHECK ((revoked = (revoked_at IS NOT NULL))),
    CONSTRAINT api_tokens_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 100))),
    CONSTRAINT api_tokens_not_rotated_from_itself CHECK ((rotated_from <> id)),
    CONSTRAINT api_tokens_scopes_check CHECK (((cardinality(scopes) > 0) AND (scopes <@ ARRAY['users'::text, 'utilization'::text, 'revenue'::text, 'impact'::text, 'sensor_data'::text]))),
    CONSTRAINT api_tokens_token_hash_check CHECK ((octet_length(token_hash) = 32))
);

CREATE TABLE public.baseline_surveys (
    id bigint NOT NULL,
    farmer_id integer NOT NULL,
    crop_id integer,
    loss_share numeric(5,4) NOT NULL,
    below_market_share numeric(5,4) DEFAULT 0 NOT NULL,
    currency character(3) NOT NULL,
    average_price_per_kg numeric(12,2) NOT NULL,
    surveyed_at timestamp with time zone NOT NULL,
    CONSTRAINT baseline_surveys_average_price_per_kg_check CHECK ((average_price_per_kg >= (0)::numeric)),
    CONSTRAINT baseline_surveys_below_market_share_check CHECK (((below_market_share >= (0)::numeric) AND (below_market_share <= (1)::numeric))),
    CONSTRAINT baseline_surveys_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT baseline_surveys_loss_share_check CHECK (((loss_share >= (0)::numeric) AND (loss_share <= (1)::numeric)))
);

ALTER TABLE public.baseline_surveys ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.baseline_surveys_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.check_ins (
    id bigint NOT NULL,
    cooling_unit_id integer NOT NULL,
    farmer_id integer NOT NULL,
    operator_id integer,
    checked_in_at timestamp with time zone NOT NULL
);

ALTER TABLE public.check_ins ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.check_ins_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.check_outs (
    id bigint NOT NULL,
    cooling_unit_id integer NOT NULL,
    farmer_id integer NOT NULL,
    operator_id integer,
    checked_out_at timestamp with time zone NOT NULL,
    currency character(3) NOT NULL,
    cooling_fees numeric(14,2) NOT NULL,
    discount numeric(14,2) DEFAULT 0 NOT NULL,
    paid boolean DEFAULT false NOT NULL,
    payment_method public.payment_method,
    paid_at timestamp with time zone,
    CONSTRAINT check_outs_check CHECK ((discount <= cooling_fees)),
    CONSTRAINT check_outs_cooling_fees_check CHECK ((cooling_fees >= (0)::numeric)),
    CONSTRAINT check_outs_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT check_outs_discount_check CHECK ((discount >= (0)::numeric))
);

ALTER TABLE public.check_outs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.check_outs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.companies (
    id integer NOT NULL,
    name text NOT NULL,
    country character(2) NOT NULL,
    currency character(3) NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT companies_country_check CHECK ((country ~ '^[A-Z]{2}$'::text)),
    CONSTRAINT companies_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text))
);

ALTER TABLE public.companies ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.companies_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.cooling_units (
    id integer NOT NULL,
    location_id integer NOT NULL,
    company_id integer NOT NULL,
    name text NOT NULL,
    capacity_crates integer NOT NULL,
    capacity_kg numeric(12,2) NOT NULL,
    metric public.unit_metric DEFAULT 'CRATES'::public.unit_metric NOT NULL,
    unit_type public.cooling_unit_type DEFAULT 'OTHER'::public.cooling_unit_type NOT NULL,
    crate_weight_kg numeric(8,2) DEFAULT 25 NOT NULL,
    pricing public.pricing_strategy DEFAULT 'DAILY'::public.pricing_strategy NOT NULL,
    price numeric(12,2) DEFAULT 0 NOT NULL,
    has_sensor boolean DEFAULT true NOT NULL,
    deleted boolean DEFAULT false NOT NULL,
    deleted_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT cooling_units_capacity_crates_check CHECK ((capacity_crates > 0)),
    CONSTRAINT cooling_units_capacity_kg_check CHECK ((capacity_kg > (0)::numeric)),
    CONSTRAINT cooling_units_check CHECK ((deleted = (deleted_at IS NOT NULL))),
    CONSTRAINT cooling_units_crate_weight_kg_check CHECK ((crate_weight_kg > (0)::numeric)),
    CONSTRAINT cooling_units_price_check CHECK ((price >= (0)::numeric))
);

ALTER TABLE public.cooling_units ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.cooling_units_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.crate_check_outs (
    check_out_id bigint NOT NULL,
    crate_id bigint NOT NULL,
    percentage numeric(5,2) NOT NULL,
    weight_kg numeric(10,2) NOT NULL,
    days_stored integer NOT NULL,
    CONSTRAINT crate_check_outs_days_stored_check CHECK ((days_stored >= 1)),
    CONSTRAINT crate_check_outs_percentage_check CHECK (((percentage > (0)::numeric) AND (percentage <= (100)::numeric))),
    CONSTRAINT crate_check_outs_weight_kg_check CHECK ((weight_kg >= (0)::numeric))
);

CREATE TABLE public.crates (
    id bigint NOT NULL,
    check_in_id bigint NOT NULL,
    cooling_unit_id integer NOT NULL,
    crop_id integer NOT NULL,
    initial_weight_kg numeric(10,2) NOT NULL,
    fully_checked_out_at timestamp with time zone,
    checked_in_at timestamp with time zone NOT NULL,
    CONSTRAINT crates_initial_weight_kg_check CHECK ((initial_weight_kg > (0)::numeric))
);

ALTER TABLE public.crates ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.crates_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.crops (
    id integer NOT NULL,
    name text NOT NULL,
    emission_factor_without_cooling numeric(8,4) NOT NULL,
    emission_factor_with_cooling numeric(8,4) NOT NULL,
    CONSTRAINT crops_emission_factor_with_cooling_check CHECK ((emission_factor_with_cooling >= (0)::numeric)),
    CONSTRAINT crops_emission_factor_without_cooling_check CHECK ((emission_factor_without_cooling >= (0)::numeric))
);

ALTER TABLE public.crops ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.crops_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.locations (
    id integer NOT NULL,
    company_id integer NOT NULL,
    name text NOT NULL,
    state text DEFAULT ''::text NOT NULL,
    city text DEFAULT ''::text NOT NULL,
    deleted boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE public.locations ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.locations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.market_surveys (
    id bigint NOT NULL,
    check_out_id bigint NOT NULL,
    crop_id integer NOT NULL,
    currency character(3) NOT NULL,
    selling_price_per_unit numeric(12,2) NOT NULL,
    kg_per_unit numeric(10,2) NOT NULL,
    kg_sold numeric(12,2) NOT NULL,
    kg_lost numeric(12,2) DEFAULT 0 NOT NULL,
    loss_reason text,
    surveyed_at timestamp with time zone NOT NULL,
    cooling_unit_id integer NOT NULL,
    CONSTRAINT market_surveys_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT market_surveys_kg_lost_check CHECK ((kg_lost >= (0)::numeric)),
    CONSTRAINT market_surveys_kg_per_unit_check CHECK ((kg_per_unit > (0)::numeric)),
    CONSTRAINT market_surveys_kg_sold_check CHECK ((kg_sold >= (0)::numeric)),
    CONSTRAINT market_surveys_selling_price_per_unit_check CHECK ((selling_price_per_unit >= (0)::numeric))
);

ALTER TABLE public.market_surveys ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.market_surveys_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.operator_assignments (
    operator_id integer NOT NULL,
    cooling_unit_id integer NOT NULL
);

CREATE TABLE public.pgmigrations (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    run_on timestamp without time zone NOT NULL
);

CREATE SEQUENCE public.pgmigrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.pgmigrations_id_seq OWNED BY public.pgmigrations.id;

CREATE TABLE public.sensor_changes (
    id bigint NOT NULL,
    cooling_unit_id integer NOT NULL,
    specification_type public.specification_type NOT NULL,
    first_at timestamp with time zone NOT NULL,
    last_at timestamp with time zone NOT NULL,
    readings integer NOT NULL,
    landed_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT sensor_changes_check CHECK ((first_at <= last_at)),
    CONSTRAINT sensor_changes_readings_check CHECK ((readings > 0))
);

ALTER TABLE public.sensor_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.sensor_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.sensor_changes_state (
    singleton boolean DEFAULT true NOT NULL,
    pruned_through bigint DEFAULT 0 NOT NULL,
    cursor_key bytea DEFAULT decode(replace(((gen_random_uuid())::text || (gen_random_uuid())::text), '-'::text, ''::text), 'hex'::text) NOT NULL,
    CONSTRAINT sensor_changes_state_singleton_check CHECK (singleton)
);

CREATE TABLE public.sensor_readings (
    cooling_unit_id integer NOT NULL,
    specification_type public.specification_type NOT NULL,
    recorded_at timestamp with time zone NOT NULL,
    value double precision NOT NULL
)
PARTITION BY RANGE (recorded_at);

CREATE TABLE public.sensor_rollup_daily (
    bucket timestamp with time zone NOT NULL,
    cooling_unit_id integer NOT NULL,
    t_sum double precision NOT NULL,
    t_min double precision,
    t_max double precision,
    t_count integer NOT NULL,
    t_hours integer NOT NULL,
    h_sum double precision NOT NULL,
    h_min double precision,
    h_max double precision,
    h_count integer NOT NULL,
    h_hours integer NOT NULL
);

CREATE VIEW public.sensor_readings_daily AS
 SELECT sensor_rollup_daily.bucket,
    sensor_rollup_daily.cooling_unit_id,
    'TEMPERATURE'::public.specification_type AS specification_type,
    (sensor_rollup_daily.t_sum / (sensor_rollup_daily.t_count)::double precision) AS value,
    sensor_rollup_daily.t_min AS min,
    sensor_rollup_daily.t_max AS max,
    sensor_rollup_daily.t_count AS sample_count,
    sensor_rollup_daily.t_hours AS hour_count
   FROM public.sensor_rollup_daily
  WHERE (sensor_rollup_daily.t_count > 0)
UNION ALL
 SELECT sensor_rollup_daily.bucket,
    sensor_rollup_daily.cooling_unit_id,
    'HUMIDITY'::public.specification_type AS specification_type,
    (sensor_rollup_daily.h_sum / (sensor_rollup_daily.h_count)::double precision) AS value,
    sensor_rollup_daily.h_min AS min,
    sensor_rollup_daily.h_max AS max,
    sensor_rollup_daily.h_count AS sample_count,
    sensor_rollup_daily.h_hours AS hour_count
   FROM public.sensor_rollup_daily
  WHERE (sensor_rollup_daily.h_count > 0);

CREATE TABLE public.sensor_readings_default (
    cooling_unit_id integer NOT NULL,
    specification_type public.specification_type NOT NULL,
    recorded_at timestamp with time zone NOT NULL,
    value double precision NOT NULL
);

CREATE TABLE public.sensor_rollup_hourly (
    bucket timestamp with time zone NOT NULL,
    cooling_unit_id integer NOT NULL,
    t_sum double precision NOT NULL,
    t_min double precision,
    t_max double precision,
    t_count integer NOT NULL,
    h_sum double precision NOT NULL,
    h_min double precision,
    h_max double precision,
    h_count integer NOT NULL
);

CREATE VIEW public.sensor_readings_hourly AS
 SELECT sensor_rollup_hourly.bucket,
    sensor_rollup_hourly.cooling_unit_id,
    'TEMPERATURE'::public.specification_type AS specification_type,
    (sensor_rollup_hourly.t_sum / (sensor_rollup_hourly.t_count)::double precision) AS value,
    sensor_rollup_hourly.t_min AS min,
    sensor_rollup_hourly.t_max AS max,
    sensor_rollup_hourly.t_count AS sample_count
   FROM public.sensor_rollup_hourly
  WHERE ((sensor_rollup_hourly.t_count > 0) AND public.sensor_serial_read())
UNION ALL
 SELECT sensor_rollup_hourly.bucket,
    sensor_rollup_hourly.cooling_unit_id,
    'HUMIDITY'::public.specification_type AS specification_type,
    (sensor_rollup_hourly.h_sum / (sensor_rollup_hourly.h_count)::double precision) AS value,
    sensor_rollup_hourly.h_min AS min,
    sensor_rollup_hourly.h_max AS max,
    sensor_rollup_hourly.h_count AS sample_count
   FROM public.sensor_rollup_hourly
  WHERE ((sensor_rollup_hourly.h_count > 0) AND public.sensor_serial_read());

CREATE TABLE public.sensor_readings_p<week> (
    cooling_unit_id integer NOT NULL,
    specification_type public.specification_type NOT NULL,
    recorded_at timestamp with time zone NOT NULL,
    value double precision NOT NULL
);

CREATE TABLE public.sensor_rollup_compacted (
    month timestamp with time zone NOT NULL,
    compacted_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.sensor_storage (
    singleton boolean DEFAULT true NOT NULL,
    profile text NOT NULL,
    retention interval,
    CONSTRAINT sensor_storage_profile_check CHECK ((profile = ANY (ARRAY['timescale'::text, 'postgres'::text]))),
    CONSTRAINT sensor_storage_retention_check CHECK ((retention >= '30 days'::interval)),
    CONSTRAINT sensor_storage_singleton_check CHECK (singleton)
);

ALTER TABLE public.token_audit_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.token_audit_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.users (
    id integer NOT NULL,
    role public.user_role NOT NULL,
    company_id integer,
    first_name text NOT NULL,
    last_name text DEFAULT ''::text NOT NULL,
    phone text,
    email text,
    user_code text,
    registered_by integer,
    is_active boolean DEFAULT true NOT NULL,
    date_joined timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT users_check CHECK (((role = 'FARMER'::public.user_role) OR (company_id IS NOT NULL))),
    CONSTRAINT users_check1 CHECK (((role <> 'FARMER'::public.user_role) OR (user_code IS NOT NULL)))
);

ALTER TABLE public.users ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.webhook_attempts (
    id bigint NOT NULL,
    delivery_id bigint NOT NULL,
    attempt integer NOT NULL,
    started_at timestamp with time zone NOT NULL,
    duration_ms integer,
    status_code integer,
    error text,
    next_attempt_at timestamp with time zone,
    outcome text NOT NULL,
    CONSTRAINT webhook_attempts_attempt_check CHECK ((attempt > 0)),
    CONSTRAINT webhook_attempts_duration_ms_check CHECK ((duration_ms >= 0)),
    CONSTRAINT webhook_attempts_duration_when_ended CHECK (((duration_ms IS NULL) = (outcome = ANY (ARRAY['sending'::text, 'interrupted'::text])))),
    CONSTRAINT webhook_attempts_error_check CHECK ((char_length(error) <= 300)),
    CONSTRAINT webhook_attempts_outcome_known CHECK ((outcome = ANY (ARRAY['sending'::text, 'succeeded'::text, 'failed'::text, 'interrupted'::text])))
);

ALTER TABLE public.webhook_attempts ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_attempts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE public.webhook_deliveries ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.webhook_endpoints (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id integer NOT NULL,
    url text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    event_types text[] NOT NULL,
    cooling_unit_ids integer[],
    disabled_reason text,
    disabled_at timestamp with time zone,
    secret text NOT NULL,
    previous_secret text,
    previous_secret_expires_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    created_by integer NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    sensor_position bigint DEFAULT 0 NOT NULL,
    sensor_notified_at timestamp with time zone,
    CONSTRAINT webhook_endpoints_check CHECK (((disabled_reason IS NULL) = (disabled_at IS NULL))),
    CONSTRAINT webhook_endpoints_check1 CHECK (((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))),
    CONSTRAINT webhook_endpoints_cooling_unit_ids_check CHECK (((cooling_unit_ids IS NULL) OR (cardinality(cooling_unit_ids) > 0))),
    CONSTRAINT webhook_endpoints_description_check CHECK ((char_length(description) <= 500)),
    CONSTRAINT webhook_endpoints_disabled_reason_check CHECK ((disabled_reason = ANY (ARRAY['employee'::text, 'failing'::text]))),
    CONSTRAINT webhook_endpoints_event_types_check CHECK ((cardinality(event_types) > 0)),
    CONSTRAINT webhook_endpoints_sensor_position_check CHECK ((sensor_position >= 0)),
    CONSTRAINT webhook_endpoints_url_check CHECK (((char_length(url) >= 1) AND (char_length(url) <= 2048)))
);

CREATE TABLE public.webhook_events (
    id bigint NOT NULL,
    company_id integer NOT NULL,
    message_id text DEFAULT ('msg_'::text || replace((gen_random_uuid())::text, '-'::text, ''::text)) NOT NULL,
    type text NOT NULL,
    occurred_at timestamp with time zone NOT NULL,
    data jsonb NOT NULL,
    ordering_key text NOT NULL,
    endpoint_id uuid,
    CONSTRAINT webhook_events_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT webhook_events_type_check CHECK ((type ~ '^[a-z_]+\.[a-z_]+$'::text))
);

ALTER TABLE public.webhook_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.webhook_token_reminders (
    api_token_id uuid NOT NULL,
    days_before integer NOT NULL,
    sent_at timestamp with time zone NOT NULL,
    CONSTRAINT webhook_token_reminders_days_before_check CHECK ((days_before = ANY (ARRAY[0, 1, 7, 30])))
);

ALTER TABLE ONLY public.sensor_readings ATTACH PARTITION public.sensor_readings_default DEFAULT;

ALTER TABLE ONLY public.sensor_readings ATTACH PARTITION public.sensor_readings_p<week> FOR VALUES FROM ('<week>') TO ('<week + 7 days>');

ALTER TABLE ONLY public.pgmigrations ALTER COLUMN id SET DEFAULT nextval('public.pgmigrations_id_seq'::regclass);

ALTER TABLE ONLY public.api_token_cooling_units
    ADD CONSTRAINT api_token_cooling_units_pkey PRIMARY KEY (api_token_id, cooling_unit_id);

ALTER TABLE ONLY public.api_token_last_client
    ADD CONSTRAINT api_token_last_client_pkey PRIMARY KEY (api_token_id);

ALTER TABLE ONLY public.api_token_usage_flushes
    ADD CONSTRAINT api_token_usage_flushes_pkey PRIMARY KEY (flush_id);

ALTER TABLE ONLY public.api_token_usage
    ADD CONSTRAINT api_token_usage_pkey PRIMARY KEY (api_token_id, day, endpoint, class);

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_token_hash_key UNIQUE (token_hash);

ALTER TABLE ONLY public.baseline_surveys
    ADD CONSTRAINT baseline_surveys_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.check_ins
    ADD CONSTRAINT check_ins_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.check_outs
    ADD CONSTRAINT check_outs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.companies
    ADD CONSTRAINT companies_name_key UNIQUE (name);

ALTER TABLE ONLY public.companies
    ADD CONSTRAINT companies_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.cooling_units
    ADD CONSTRAINT cooling_units_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.crate_check_outs
    ADD CONSTRAINT crate_check_outs_pkey PRIMARY KEY (check_out_id, crate_id);

ALTER TABLE ONLY public.crates
    ADD CONSTRAINT crates_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.crops
    ADD CONSTRAINT crops_name_key UNIQUE (name);

ALTER TABLE ONLY public.crops
    ADD CONSTRAINT crops_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.locations
    ADD CONSTRAINT locations_id_company_id_key UNIQUE (id, company_id);

ALTER TABLE ONLY public.locations
    ADD CONSTRAINT locations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.market_surveys
    ADD CONSTRAINT market_surveys_check_out_id_key UNIQUE (check_out_id);

ALTER TABLE ONLY public.market_surveys
    ADD CONSTRAINT market_surveys_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.operator_assignments
    ADD CONSTRAINT operator_assignments_pkey PRIMARY KEY (operator_id, cooling_unit_id);

ALTER TABLE ONLY public.pgmigrations
    ADD CONSTRAINT pgmigrations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.sensor_changes
    ADD CONSTRAINT sensor_changes_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.sensor_changes_state
    ADD CONSTRAINT sensor_changes_state_pkey PRIMARY KEY (singleton);

ALTER TABLE ONLY public.sensor_readings
    ADD CONSTRAINT sensor_readings_pkey PRIMARY KEY (cooling_unit_id, specification_type, recorded_at);

ALTER TABLE ONLY public.sensor_readings_default
    ADD CONSTRAINT sensor_readings_default_pkey PRIMARY KEY (cooling_unit_id, specification_type, recorded_at);

ALTER TABLE ONLY public.sensor_readings_p<week>
    ADD CONSTRAINT sensor_readings_p<week>_pkey PRIMARY KEY (cooling_unit_id, specification_type, recorded_at);

ALTER TABLE ONLY public.sensor_rollup_compacted
    ADD CONSTRAINT sensor_rollup_compacted_pkey PRIMARY KEY (month);

ALTER TABLE ONLY public.sensor_rollup_daily
    ADD CONSTRAINT sensor_rollup_daily_pkey PRIMARY KEY (cooling_unit_id, bucket) INCLUDE (t_sum, t_min, t_max, t_count, t_hours, h_sum, h_min, h_max, h_count, h_hours);

ALTER TABLE ONLY public.sensor_rollup_hourly
    ADD CONSTRAINT sensor_rollup_hourly_pkey PRIMARY KEY (cooling_unit_id, bucket);

ALTER TABLE ONLY public.sensor_storage
    ADD CONSTRAINT sensor_storage_pkey PRIMARY KEY (singleton);

ALTER TABLE ONLY public.token_audit_events
    ADD CONSTRAINT token_audit_events_company_id_sequence_key UNIQUE (company_id, sequence);

ALTER TABLE ONLY public.token_audit_events
    ADD CONSTRAINT token_audit_events_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_user_code_key UNIQUE (user_code);

ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_id_event_id_key UNIQUE (endpoint_id, event_id);

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.webhook_events
    ADD CONSTRAINT webhook_events_message_id_key UNIQUE (message_id);

ALTER TABLE ONLY public.webhook_events
    ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.webhook_token_reminders
    ADD CONSTRAINT webhook_token_reminders_pkey PRIMARY KEY (api_token_id, days_before);

CREATE INDEX api_token_usage_day_idx ON public.api_token_usage USING btree (day);

CREATE INDEX api_token_usage_flushes_flushed_at_idx ON public.api_token_usage_flushes USING btree (flushed_at);

CREATE INDEX api_tokens_company_created_idx ON public.api_tokens USING btree (company_id, created_at DESC, id DESC);

CREATE UNIQUE INDEX api_tokens_rotated_from_idx ON public.api_tokens USING btree (rotated_from) WHERE (rotated_from IS NOT NULL);

CREATE INDEX baseline_surveys_farmer_idx ON public.baseline_surveys USING btree (farmer_id, surveyed_at);

CREATE INDEX check_ins_farmer_idx ON public.check_ins USING btree (farmer_id);

CREATE INDEX check_ins_unit_farmer_idx ON public.check_ins USING btree (cooling_unit_id, farmer_id);

CREATE INDEX check_ins_unit_time_farmer_idx ON public.check_ins USING btree (cooling_unit_id, checked_in_at) INCLUDE (farmer_id);

CREATE INDEX check_outs_farmer_idx ON public.check_outs USING btree (farmer_id);

CREATE INDEX check_outs_unit_time_farmer_idx ON public.check_outs USING btree (cooling_unit_id, checked_out_at) INCLUDE (farmer_id);

CREATE INDEX cooling_units_company_deleted_idx ON public.cooling_units USING btree (company_id) WHERE deleted;

CREATE INDEX cooling_units_company_idx ON public.cooling_units USING btree (company_id) WHERE (NOT deleted);

CREATE INDEX cooling_units_location_idx ON public.cooling_units USING btree (location_id);

CREATE INDEX crate_check_outs_crate_idx ON public.crate_check_outs USING btree (crate_id);

CREATE INDEX crates_check_in_idx ON public.crates USING btree (check_in_id);

CREATE INDEX crates_unit_idx ON public.crates USING btree (cooling_unit_id, fully_checked_out_at);

CREATE INDEX crates_unit_stay_idx ON public.crates USING gist (cooling_unit_id, public.crate_stay_range(checked_in_at, fully_checked_out_at));

CREATE INDEX locations_company_idx ON public.locations USING btree (company_id);

CREATE INDEX market_surveys_unit_time_idx ON public.market_surveys USING btree (cooling_unit_id, surveyed_at);

CREATE INDEX operator_assignments_unit_idx ON public.operator_assignments USING btree (cooling_unit_id);

CREATE INDEX sensor_changes_landed ON public.sensor_changes USING btree (landed_at);

CREATE INDEX sensor_changes_unit ON public.sensor_changes USING btree (cooling_unit_id, id);

CREATE INDEX sensor_rollup_daily_bucket_brin ON public.sensor_rollup_daily USING brin (bucket);

CREATE INDEX sensor_rollup_hourly_bucket_brin ON public.sensor_rollup_hourly USING brin (bucket);

CREATE INDEX token_audit_events_related_token_idx ON public.token_audit_events USING btree (related_token_id, sequence) WHERE (related_token_id IS NOT NULL);

CREATE INDEX token_audit_events_token_idx ON public.token_audit_events USING btree (token_id, sequence);

CREATE INDEX users_company_role_joined_idx ON public.users USING btree (company_id, role, date_joined);

CREATE INDEX users_registered_by_farmer_idx ON public.users USING btree (registered_by) WHERE (role = 'FARMER'::public.user_role);

CREATE INDEX webhook_attempts_delivery_idx ON public.webhook_attempts USING btree (delivery_id, attempt);

CREATE INDEX webhook_attempts_sending_idx ON public.webhook_attempts USING btree (delivery_id) WHERE (outcome = 'sending'::text);

CREATE INDEX webhook_deliveries_due_idx ON public.webhook_deliveries USING btree (next_attempt_at, id) WHERE (status = 'pending'::text);

CREATE INDEX webhook_deliveries_endpoint_idx ON public.webhook_deliveries USING btree (endpoint_id, id DESC);

CREATE INDEX webhook_deliveries_pending_key_idx ON public.webhook_deliveries USING btree (endpoint_id, ordering_key, id) WHERE (status = 'pending'::text);

CREATE INDEX webhook_endpoints_company_idx ON public.webhook_endpoints USING btree (company_id, created_at DESC, id DESC);

CREATE INDEX webhook_events_company_idx ON public.webhook_events USING btree (company_id, occurred_at);

CREATE INDEX webhook_events_occurred_idx ON public.webhook_events USING btree (occurred_at);

ALTER INDEX public.sensor_readings_pkey ATTACH PARTITION public.sensor_readings_default_pkey;

ALTER INDEX public.sensor_readings_pkey ATTACH PARTITION public.sensor_readings_p<week>_pkey;

CREATE TRIGGER check_ins_move_crates AFTER UPDATE OF checked_in_at ON public.check_ins FOR EACH ROW WHEN ((old.checked_in_at IS DISTINCT FROM new.checked_in_at)) EXECUTE FUNCTION public.check_ins_move_crates();

CREATE TRIGGER check_outs_move_surveys AFTER UPDATE OF cooling_unit_id ON public.check_outs FOR EACH ROW WHEN ((old.cooling_unit_id IS DISTINCT FROM new.cooling_unit_id)) EXECUTE FUNCTION public.check_outs_move_surveys();

CREATE TRIGGER cooling_units_announce AFTER INSERT OR DELETE OR UPDATE OF company_id, location_id, deleted ON public.cooling_units FOR EACH ROW EXECUTE FUNCTION public.cooling_units_announce();

CREATE TRIGGER crates_check_in_time BEFORE INSERT OR UPDATE OF check_in_id, checked_in_at ON public.crates FOR EACH ROW EXECUTE FUNCTION public.crates_take_check_in_time();

CREATE TRIGGER market_surveys_check_out_unit BEFORE INSERT OR UPDATE OF check_out_id, cooling_unit_id ON public.market_surveys FOR EACH ROW EXECUTE FUNCTION public.market_surveys_take_check_out_unit();

CREATE TRIGGER sensor_rollups_delete AFTER DELETE ON public.sensor_readings REFERENCING OLD TABLE AS old_readings FOR EACH STATEMENT EXECUTE FUNCTION public.sensor_rollups_after_delete();

CREATE TRIGGER sensor_rollups_insert AFTER INSERT ON public.sensor_readings REFERENCING NEW TABLE AS new_readings FOR EACH STATEMENT EXECUTE FUNCTION public.sensor_rollups_add();

CREATE TRIGGER sensor_rollups_insert AFTER INSERT ON public.sensor_readings_p<week> REFERENCING NEW TABLE AS new_readings FOR EACH STATEMENT EXECUTE FUNCTION public.sensor_rollups_add();

CREATE TRIGGER sensor_rollups_truncate AFTER TRUNCATE ON public.sensor_readings FOR EACH STATEMENT EXECUTE FUNCTION public.sensor_rollups_truncate();

CREATE TRIGGER sensor_rollups_update AFTER UPDATE ON public.sensor_readings REFERENCING OLD TABLE AS old_readings NEW TABLE AS new_readings FOR EACH STATEMENT EXECUTE FUNCTION public.sensor_rollups_after_update();

CREATE TRIGGER token_audit_events_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.token_audit_events FOR EACH STATEMENT EXECUTE FUNCTION public.token_audit_events_refuse_change();

ALTER TABLE public.token_audit_events ENABLE ALWAYS TRIGGER token_audit_events_append_only;

CREATE TRIGGER token_audit_events_chain BEFORE INSERT ON public.token_audit_events FOR EACH ROW EXECUTE FUNCTION public.token_audit_events_chain();

CREATE TRIGGER token_audit_events_webhooks AFTER INSERT ON public.token_audit_events FOR EACH ROW EXECUTE FUNCTION public.webhook_token_event();

CREATE TRIGGER webhook_endpoints_sensor_start BEFORE INSERT ON public.webhook_endpoints FOR EACH ROW EXECUTE FUNCTION public.webhook_endpoint_sensor_start();

CREATE TRIGGER webhook_events_fan_out AFTER INSERT ON public.webhook_events FOR EACH ROW EXECUTE FUNCTION public.webhook_event_fan_out();

ALTER TABLE ONLY public.api_token_cooling_units
    ADD CONSTRAINT api_token_cooling_units_api_token_id_fkey FOREIGN KEY (api_token_id) REFERENCES public.api_tokens(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.api_token_cooling_units
    ADD CONSTRAINT api_token_cooling_units_cooling_unit_id_fkey FOREIGN KEY (cooling_unit_id) REFERENCES public.cooling_units(id);

ALTER TABLE ONLY public.api_token_last_client
    ADD CONSTRAINT api_token_last_client_api_token_id_fkey FOREIGN KEY (api_token_id) REFERENCES public.api_tokens(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.api_token_usage
    ADD CONSTRAINT api_token_usage_api_token_id_fkey FOREIGN KEY (api_token_id) REFERENCES public.api_tokens(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.users(id);

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_rotated_from_fkey FOREIGN KEY (rotated_from) REFERENCES public.api_tokens(id);

ALTER TABLE ONLY public.baseline_surveys
    ADD CONSTRAINT baseline_surveys_crop_id_fkey FOREIGN KEY (crop_id) REFERENCES public.crops(id);

ALTER TABLE ONLY public.baseline_surveys
    ADD CONSTRAINT baseline_surveys_farmer_id_fkey FOREIGN KEY (farmer_id) REFERENCES public.users(id);

ALTER TABLE ONLY public.check_ins
    ADD CONSTRAINT check_ins_cooling_unit_id_fkey FOREIGN KEY (cooling_unit_id) REFERENCES public.cooling_units(id);

ALTER TABLE ONLY public.check_ins
    ADD CONSTRAINT check_ins_farmer_id_fkey FOREIGN KEY (farmer_id) REFERENCES public.users(id);

ALTER TABLE ONLY public.check_ins
    ADD CONSTRAINT check_ins_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.users(id);

ALTER TABLE ONLY public.check_outs
    ADD CONSTRAINT check_outs_cooling_unit_id_fkey FOREIGN KEY (cooling_unit_id) REFERENCES public.cooling_units(id);

ALTER TABLE ONLY public.check_outs
    ADD CONSTRAINT check_outs_farmer_id_fkey FOREIGN KEY (farmer_id) REFERENCES public.users(id);

ALTER TABLE ONLY public.check_outs
    ADD CONSTRAINT check_outs_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.users(id);

ALTER TABLE ONLY public.cooling_units
    ADD CONSTRAINT cooling_units_location_id_company_id_fkey FOREIGN KEY (location_id, company_id) REFERENCES public.locations(id, company_id);

ALTER TABLE ONLY public.crate_check_outs
    ADD CONSTRAINT crate_check_outs_check_out_id_fkey FOREIGN KEY (check_out_id) REFERENCES public.check_outs(id);

ALTER TABLE ONLY public.crate_check_outs
    ADD CONSTRAINT crate_check_outs_crate_id_fkey FOREIGN KEY (crate_id) REFERENCES public.crates(id);

ALTER TABLE ONLY public.crates
    ADD CONSTRAINT crates_check_in_id_fkey FOREIGN KEY (check_in_id) REFERENCES public.check_ins(id);

ALTER TABLE ONLY public.crates
    ADD CONSTRAINT crates_cooling_unit_id_fkey FOREIGN KEY (cooling_unit_id) REFERENCES public.cooling_units(id);

ALTER TABLE ONLY public.crates
    ADD CONSTRAINT crates_crop_id_fkey FOREIGN KEY (crop_id) REFERENCES public.crops(id);

ALTER TABLE ONLY public.locations
    ADD CONSTRAINT locations_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

ALTER TABLE ONLY public.market_surveys
    ADD CONSTRAINT market_surveys_check_out_id_fkey FOREIGN KEY (check_out_id) REFERENCES public.check_outs(id);

ALTER TABLE ONLY public.market_surveys
    ADD CONSTRAINT market_surveys_crop_id_fkey FOREIGN KEY (crop_id) REFERENCES public.crops(id);

ALTER TABLE ONLY public.operator_assignments
    ADD CONSTRAINT operator_assignments_cooling_unit_id_fkey FOREIGN KEY (cooling_unit_id) REFERENCES public.cooling_units(id);

ALTER TABLE ONLY public.operator_assignments
    ADD CONSTRAINT operator_assignments_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.users(id);

ALTER TABLE ONLY public.token_audit_events
    ADD CONSTRAINT token_audit_events_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_registered_by_fkey FOREIGN KEY (registered_by) REFERENCES public.users(id);

ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.webhook_deliveries(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.webhook_events(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.users(id);

ALTER TABLE ONLY public.webhook_events
    ADD CONSTRAINT webhook_events_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

ALTER TABLE ONLY public.webhook_events
    ADD CONSTRAINT webhook_events_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_token_reminders
    ADD CONSTRAINT webhook_token_reminders_api_token_id_fkey FOREIGN KEY (api_token_id) REFERENCES public.api_tokens(id) ON DELETE CASCADE;

-- sensor_storage
{"profile":"postgres","retention":null}

-- pgmigrations
{"name":"001_core-schema"}
{"name":"002_analytics-indexes"}
{"name":"003_sensor-store"}
{"name":"004_timescale-retention-window"}
{"name":"005_token-rotation"}
{"name":"007_unit-directory-notify"}
{"name":"008_timescale-aggregate-layout"}
{"name":"009_analytics-figures"}
{"name":"010_token-audit-events"}
{"name":"011_token-allowed-ips"}
{"name":"012_token-usage"}
{"name":"013_sensor-changes"}
{"name":"014_hourly-rollup-serial"}
{"name":"015_token-usage-not-modified"}
{"name":"016_webhooks"}
{"name":"017_webhook-sensor-notices"}
{"name":"018_webhook-attempt-outcome"}
{"name":"019_timescale-hourly-in-bucket-order"}
{"name":"020_crate-stays"}
{"name":"021_market-survey-units"}

-- weekly partitions
{"partitions":14}
