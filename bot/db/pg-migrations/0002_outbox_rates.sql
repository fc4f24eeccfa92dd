CREATE TABLE "outbox_bot_rates" (
	"bot_id" text PRIMARY KEY NOT NULL,
	"next_slot" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "outbox_chat_rates" (
	"key" text PRIMARY KEY NOT NULL,
	"send" double precision,
	"edit" double precision,
	"delete" double precision,
	"action" double precision,
	"draft" double precision,
	"message" double precision,
	"message_weight" integer DEFAULT 1 NOT NULL,
	"hold_until" double precision,
	"updated_at" text DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') NOT NULL
);
