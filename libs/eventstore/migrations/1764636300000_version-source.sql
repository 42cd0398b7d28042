-- Up Migration

-- A version keeps the definition as it was written (YAML comments and key order included), for
-- editors to show; the canonical JSON beside it stays what the digest and every reader go by.
-- Versions made before this have none.
ALTER TABLE intake.versions
  ADD COLUMN source_text text,
  ADD COLUMN source_format text CHECK (source_format IN ('json', 'yaml')),
  ADD CONSTRAINT versions_source_whole CHECK ((source_text IS NULL) = (source_format IS NULL));

-- Down Migration

ALTER TABLE intake.versions DROP CONSTRAINT versions_source_whole, DROP COLUMN source_format, DROP COLUMN source_text;
